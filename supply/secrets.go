package supply

import (
	"fmt"
	"os"
	"path/filepath"
)

// A container's secrets: the files of its spec that hold a password (its
// Secrets, and a Config that carries one), written into its socket dir
// for the image's entrypoint to read, removed once read, and put back
// while it restarts.

// handOver are the files of a spec that hold a secret, by name in the
// socket dir: its Config and its Secrets.
type handOver map[string]secretFile

type secretFile struct {
	data []byte
	mode os.FileMode
}

// secretPaths are the paths of spec's Secrets in dir: each is read once,
// by the image's entrypoint, and removed as soon as it has been
// (RemoveOnceRead). Its Config is not: a target served by two instances
// has both read theirs, one after the other.
func secretPaths(dir string, spec ContainerSpec) []string {
	var paths []string
	for name := range spec.Secrets {
		paths = append(paths, filepath.Join(dir, name))
	}
	return paths
}

// writeSecrets writes spec's Secrets into dir before its container
// starts: 0644, as whichever user reads them in the container must (an
// image may read its VAR_FILE after dropping root; a user namespace
// maps root elsewhere), in a socket dir inside the run's 0700 dir, which
// no other user of this host may enter.
func writeSecrets(dir string, spec ContainerSpec) error {
	for name, data := range spec.Secrets {
		if err := WriteServerFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return fmt.Errorf("hand the server its password: write %s into its socket dir: %w", name, err)
		}
	}
	return nil
}

// takeConfig removes the spec's config file and secrets (the server has
// read them) and returns them, to put back for a restart.
func takeConfig(dir string, spec ContainerSpec) handOver {
	files := handOver{}
	if spec.Config != "" {
		path := filepath.Join(dir, spec.Config)
		data, _ := os.ReadFile(path)
		files[spec.Config] = secretFile{data: data, mode: 0o644}
	}
	for name, data := range spec.Secrets {
		files[name] = secretFile{data: []byte(data), mode: 0o644}
	}
	for name := range files {
		os.Remove(filepath.Join(dir, name))
	}
	return files
}

// putBack writes files back into dir while a container restarts; the
// returned func removes them again.
func (files handOver) putBack(dir string) (func(), error) {
	remove := func() {
		for name := range files {
			os.Remove(filepath.Join(dir, name))
		}
	}
	for name, f := range files {
		if err := WriteServerFile(filepath.Join(dir, name), f.data, f.mode); err != nil {
			remove()
			return remove, err
		}
	}
	return remove, nil
}
