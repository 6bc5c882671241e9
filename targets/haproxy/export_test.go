package haproxy

import (
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// LyingRecipe is the recipe of HAProxy in front of target's server with
// its backend unix pointing at the server's TCP address, while the tcp
// and unix paths name the socket for that leg: locally or in containers.
func LyingRecipe(target string) supply.Recipe {
	in, ok := targets.Lookup(target)
	if !ok {
		panic("haproxy: no target " + target)
	}
	return recipe(in, tcpLeg, tcpLeg)
}
