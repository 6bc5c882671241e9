package dbsock

import (
	"testing"

	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/redis"
)

// TestCompareTalksToTheServerWithItsSettings: the server-side client of
// Compare is the target's driver with StartOptions.Settings, or with the
// target's defaults.
func TestCompareTalksToTheServerWithItsSettings(t *testing.T) {
	tg, _ := targets.Lookup("redis")
	resp2 := redis.DefaultSettings()
	resp2.Protocol = 2
	for _, c := range []struct {
		settings targets.Settings
		want     string
	}{{nil, "resp3"}, {resp2, "resp2"}} {
		if got := (&Server{Target: "redis", settings: c.settings}).driver(tg).Mode(); got != c.want {
			t.Errorf("settings %v: the server's driver speaks %q, want %q", c.settings, got, c.want)
		}
	}
}
