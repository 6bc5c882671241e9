package haproxy

import (
	"github.com/dbsock/dbsock/supply"
)

// LyingRecipe is the recipe of HAProxy in front of target's server with
// its backend unix pointing at the server's TCP address, while the tcp
// and unix paths name the socket for that leg.
func LyingRecipe(target string) supply.Recipe {
	return supply.Recipe{Local: localBehind(target, (*supply.Server).TCP, (*supply.Server).TCP)}
}
