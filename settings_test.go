package dbsock_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/redis"
)

// TestStartRefusesSettingsItCannotUse: a target's settings are checked
// before anything starts, and the error names the field a library user
// sets, never a flag.
func TestStartRefusesSettingsItCannotUse(t *testing.T) {
	resp4 := redis.DefaultSettings()
	resp4.Protocol = 4
	for _, c := range []struct {
		target   string
		settings targets.Settings
		want     string
	}{
		{"redis", resp4, `dbsock.Start("redis"): StartOptions.Settings: redis.Settings.Protocol 4 is not accepted; use 2 or 3`},
		{"mysql", redis.DefaultSettings(), `dbsock.Start("mysql"): StartOptions.Settings are a *redis.Settings; the mysql target takes a *mysql.Settings (its package's DefaultSettings)`},
	} {
		srv, err := dbsock.Start(context.Background(), c.target, dbsock.StartOptions{Settings: c.settings})
		if err == nil {
			srv.Close()
			t.Fatalf("%s: Start took settings %+v", c.target, c.settings)
		}
		if err.Error() != c.want || strings.Contains(err.Error(), "--") {
			t.Errorf("%s: err = %q, want %q", c.target, err, c.want)
		}
	}
}

// A target's own settings are set by name, as dbsock run's --TARGET-*
// flags set them; Start checks them before it starts anything.
func ExampleStartOptions_settings() {
	s := redis.DefaultSettings() // go-redis over RESP3, as dbsock run
	s.Protocol = 4               // --redis-protocol 4
	_, err := dbsock.Start(context.Background(), "redis", dbsock.StartOptions{Settings: s})
	fmt.Println(err)
	// Output: dbsock.Start("redis"): StartOptions.Settings: redis.Settings.Protocol 4 is not accepted; use 2 or 3
}
