package postgres_test

import (
	"testing"

	"github.com/dbsock/dbsock/pipeline/pipelinetest"
)

// The official image's path, run against the offline image that follows
// its entrypoint (user and uid, root dropped through gosu, umask, set-up
// through a temporary server on the image's default socket): both
// transports verified, the server as the image's user, nothing left.
func TestDocker(t *testing.T)  { pipelinetest.Run(t, "postgres", "docker") }
func TestCompose(t *testing.T) { pipelinetest.Run(t, "postgres", "compose") }
