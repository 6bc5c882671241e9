//go:build !linux

package sysinfo

// wakeCosts measures nothing where threads cannot be pinned to a CPU.
func wakeCosts() (same, cross float64) { return 0, 0 }
