package supply

import (
	"fmt"
	"os"
)

// WriteServerFile writes data to path with exactly mode, whatever this
// process's umask: a file a server in a container reads as its own user
// (uid 999 in the official images) must be readable by that user, and a
// umask of 0077 (which the official images' entrypoints set, and which a
// job run in such an image inherits) would turn os.WriteFile's 0644 into a
// 0600 file of root's that the server cannot open.
func WriteServerFile(path string, data []byte, mode os.FileMode) error {
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("write %s for the server: %w", path, err)
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("make %s readable by the server (mode %v): %w", path, mode, err)
	}
	return nil
}
