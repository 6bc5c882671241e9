package mysql_test

import (
	"context"
	"sync"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/mysql"
)

// TestConcurrentLocalServersStart: runs that start MariaDB at the same
// time (each its own provider, as separate dbsock processes are) must not
// meet in a shared temp dir while the data dirs are initialised.
func TestConcurrentLocalServersStart(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	tg, _ := targets.Lookup("mysql")
	const runs = 4
	var wg sync.WaitGroup
	errs := make([]error, runs)
	for i := 0; i < runs; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			l := supply.NewLocal()
			defer l.Close()
			srv, err := l.Supply(context.Background(), tg.Supply())
			if err == nil {
				err = srv.Stop(context.Background())
			}
			errs[i] = err
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("run %d: %v", i+1, err)
		}
	}
}
