package redis

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dbsock/dbsock/supply"
)

// recipe starts redis-server locally, and redis:7.4 in a container
// (dbsock/redis:7.0 without a registry).
var recipe = supply.Recipe{Local: localServer, Container: &supply.Container{Image: "redis:7.4", Offline: "dbsock/redis:7.0", UID: 999, Spec: container}}

// redisContainer runs the official redis image (and dbsock/redis); the
// password goes through a config file in the private socket dir.
// With the run's TLS files it also serves TLS at its second port.
func container(sf supply.SpecFor) (supply.ContainerSpec, error) {
	pw, err := supply.RandomPassword()
	if err != nil {
		return supply.ContainerSpec{}, err
	}
	conf := fmt.Sprintf("port %d\nbind %s\nunixsocket /sock/redis.sock\nunixsocketperm 777\nsave \"\"\nappendonly no\nrequirepass %s\n", sf.Port, strings.ReplaceAll(sf.Bind, ",", " "), pw)
	tlsPort := 0
	if sf.TLS.Cert != "" {
		conf += TLSConfig(sf.TLSPort, sf.TLS)
		tlsPort = sf.TLSPort
	}
	if err := supply.WriteServerFile(filepath.Join(sf.Dir, "redis.conf"), []byte(conf), 0o644); err != nil {
		return supply.ContainerSpec{}, err
	}
	return supply.ContainerSpec{Cmd: []string{"redis-server", "/sock/redis.conf"}, Socket: "redis.sock", Config: "redis.conf", Password: pw, TLSPort: tlsPort}, nil
}
