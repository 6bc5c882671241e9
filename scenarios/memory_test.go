package scenarios

import (
	"errors"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// TestCheckMemory: the budget's figures, computed by hand. A histogram
// from 1 ns to 60 s at 3 significant digits has 2048 sub-buckets and 26
// buckets (2048 x 2^25 > 6e10), so (26+1) x 1024 counts of 8 bytes, plus
// hdrhistogram-go's 68 bytes of fields (its ByteSize): 221,252 bytes. A
// pk worker holds one per transport and a connection of 128 KiB on each:
// 2 x (221,252 + 131,072) = 704,648 bytes; with 6-byte values, 3 copies,
// 704,666 bytes, and 640 MiB (671,088,640 bytes) fit 952 workers.
func TestCheckMemory(t *testing.T) {
	if histogramBytes != 221252 {
		t.Fatalf("histogram bytes %d, want 221252", histogramBytes)
	}
	if err := (Settings{}).CheckMemory(Case{Concurrency: 952}, 6, 1, 2); err != nil {
		t.Errorf("952 workers: %v", err)
	}
	var me *MemoryError
	if err := (Settings{}).CheckMemory(Case{Concurrency: 953}, 6, 1, 2); !errors.As(err, &me) {
		t.Fatalf("953 workers: %v, want a MemoryError", err)
	}
	if me.MaxWorkers != 952 || me.WorkerBytes != 704648 || me.Bytes != 953*704666 {
		t.Errorf("953 workers: %+v", me)
	}
	// The connect scenario keeps 8 histograms per transport (the op's, its
	// two phases and connect's three parts, the warm-up's two):
	// 2 x (8 x 221,252 + 131,072).
	err := (Settings{}).CheckMemory(Case{Concurrency: 300, Scenario: Connect}, 6, 1, 2)
	if !errors.As(err, &me) || me.WorkerBytes != 2*(8*221252+131072) || me.MaxWorkers != 671088640/(2*(8*221252+131072)+18) {
		t.Errorf("connect, 300 workers: %v", err)
	}
	// Mixed reads and writes keep two; the open loop one more.
	err = (Settings{Op: drivers.OpMixed, Rate: 100}).CheckMemory(Case{Concurrency: 1000}, 6, 1, 2)
	if !errors.As(err, &me) || me.WorkerBytes != 2*(3*221252+131072) {
		t.Errorf("mixed open loop: %v", err)
	}
	// A third path holds a third of it more: 3 x (221,252 + 131,072).
	err = (Settings{}).CheckMemory(Case{Concurrency: 953}, 6, 1, 3)
	if !errors.As(err, &me) || me.WorkerBytes != 3*(221252+131072) || me.MaxWorkers != 671088640/(3*(221252+131072)+18) {
		t.Errorf("three paths, 953 workers: %v", err)
	}
	// One worker whose pipelined values alone pass the limit.
	err = (Settings{}).CheckMemory(Case{}, 16<<20, 10000, 2)
	if !errors.As(err, &me) || me.MaxWorkers != 0 || me.ValueBytes != 3*10000*(16<<20) {
		t.Errorf("values in flight: %v", err)
	}
}
