package placement

import (
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOverlappingPinsRestoreTheOriginal: runs that pin the client at the
// same time (concurrent dbsock.Compare calls) leave the process as it
// was once the last ends; one that asks for other CPUs meanwhile is
// refused.
func TestOverlappingPinsRestoreTheOriginal(t *testing.T) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	if before.Count() < 2 {
		t.Skip("needs 2 CPUs")
	}
	var wg sync.WaitGroup
	first, err := PinProcess([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := PinProcess([]int{0})
			if err != nil {
				t.Error(err)
				return
			}
			if err := r(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if _, err := PinProcess([]int{1}); err == nil {
		t.Error("a pin to other CPUs while one is held was accepted")
	}
	var during unix.CPUSet
	unix.SchedGetaffinity(0, &during)
	if during.Count() != 1 || !during.IsSet(0) {
		t.Errorf("while the first run holds it, the affinity has %d CPUs", during.Count())
	}
	if err := first(); err != nil {
		t.Fatal(err)
	}
	var after unix.CPUSet
	unix.SchedGetaffinity(0, &after)
	if after != before {
		t.Errorf("after every run ended the affinity has %d CPUs, before %d", after.Count(), before.Count())
	}
}
