package agents

import (
	"io"
	"io/fs"
)

// SetInstallLog sends what installs say to w until the returned func.
func SetInstallLog(w io.Writer) func() {
	old := installLog
	installLog = w
	return func() { installLog = old }
}

// Embedded are the stacks' files in dbsock's binary.
func Embedded() fs.FS { return embedded }
