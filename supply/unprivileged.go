package supply

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
)

// Unprivileged makes ls's server run as one of users (the first this
// machine has; "nobody" when it has none of them) when dbsock runs as
// root, so that a server dbsock starts never holds root's rights: the
// server's directory becomes that user's, and the run's directory lets it
// pass (0711: enter, not list). As any other user it does nothing: the
// server runs as dbsock does. server names the server in errors.
func (ls *LocalServer) Unprivileged(server string, users ...string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	name := "nobody"
	for _, u := range users {
		if _, err := user.Lookup(u); err == nil {
			name = u
			break
		}
	}
	cred, err := SystemUser(name, server)
	if err != nil {
		return err
	}
	if err := os.Chown(ls.Dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("give %s's directory %s to user %s, as which it runs: %w", server, ls.Dir, name, err)
	}
	if err := os.Chmod(filepath.Dir(ls.Dir), 0o711); err != nil {
		return fmt.Errorf("let user %s, as which %s runs, enter %s: %w", name, server, filepath.Dir(ls.Dir), err)
	}
	if err := ClosedDir(ls.Dir, server, cred); err != nil {
		return err
	}
	ls.RunAs = cred
	return nil
}

// Own gives path, a file dbsock wrote into the server's directory, to the
// user the server runs as (nothing when it runs as dbsock does).
func (ls *LocalServer) Own(path string) error {
	if ls.RunAs == nil {
		return nil
	}
	if err := os.Chown(path, int(ls.RunAs.Uid), int(ls.RunAs.Gid)); err != nil {
		return fmt.Errorf("give %s to uid %d, as which its server runs: %w", path, ls.RunAs.Uid, err)
	}
	return nil
}
