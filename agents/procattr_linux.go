package agents

// On Linux every agent runs under a keeper (keeper_linux.go).

// startProcess starts a keeper: on the one thread that starts them.
func startProcess(start func() error) error { return startOnKeeperThread(start) }
