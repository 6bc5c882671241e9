package mysql

import "testing"

func TestErrorLinesKeepTheCause(t *testing.T) {
	out := "Installing MariaDB/MySQL system tables in '/d' ...\n2026-11-23 [ERROR] InnoDB: Unable to create temporary file; errno: 2\nInstallation of system tables failed!\n\nThe problem could be conflicting information in an external\nmy.cnf files. You can ignore these by doing:\n    shell> /usr/bin/mariadb-install-db --defaults-file=~/.my.cnf\nYou can also try to start the mariadbd daemon with:\n    shell> /usr/sbin/mariadbd --skip-grant-tables --general-log &\nand use the command line tool /usr/bin/mariadb\nPlease consult the MariaDB Knowledge Base\n"
	if got := errorLines(out); got != "2026-11-23 [ERROR] InnoDB: Unable to create temporary file; errno: 2" {
		t.Fatalf("got %q", got)
	}
	if got := errorLines("a\nb\nc"); got != "a\nb\nc" {
		t.Fatalf("without ERROR lines: %q", got)
	}
}
