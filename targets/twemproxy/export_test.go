package twemproxy

import (
	"github.com/dbsock/dbsock/supply"
)

// LyingRecipe is the recipe of nutcracker in front of target's server
// with its two pools' listeners swapped: pool tcp-tcp on the socket the
// unix-tcp path names, pool unix-tcp on the TCP address tcp-tcp names.
func LyingRecipe(target string) supply.Recipe {
	return supply.Recipe{Local: localBehind(target, func(tcp, sock string) (string, string) { return sock, tcp })}
}
