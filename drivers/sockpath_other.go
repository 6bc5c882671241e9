//go:build !linux

package drivers

// MaxSocketPath is the longest Unix socket path this OS accepts:
// sizeof(sun_path), 104 on macOS and the BSDs, less the terminating NUL.
// macOS's $TMPDIR (/var/folders/...) leaves little of it.
const MaxSocketPath = 103
