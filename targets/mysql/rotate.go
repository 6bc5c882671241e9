package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// Names of the container's secret files: the bootstrap passwords its
// entrypoint gives the dbsock account and root.
const (
	secretPassword     = "mysql-password"
	secretRootPassword = "mysql-root-password"
)

// rotate is the container's supply.Container.Rotate: once the server
// takes the dbsock account's bootstrap password over TCP (the real server,
// not the entrypoint's temporary one, which has no network), it logs in as
// root@localhost over the Unix socket with root's bootstrap password and
// gives root and the dbsock account, at every host they exist for, the
// run's password in one statement, the password sent as a quoted literal
// over the connection. A server that takes the run's password already
// (a restart) is left as it is.
func rotate(ctx context.Context, srv *supply.Server, bootstrap map[string]string) error {
	d := New("", drivers.Workload{})
	if _, err := d.Info(ctx, srv.TCP()); err == nil {
		return nil
	}
	boot := srv.TCP()
	boot.Password = bootstrap[secretPassword]
	if _, err := d.Info(ctx, boot); err != nil {
		return fmt.Errorf("log in to mysql at %s with neither the run's nor the bootstrap password (still starting?): %w", srv.TCP().Address, err)
	}
	root := srv.Unix()
	root.User, root.Password, root.Database = "root", bootstrap[secretRootPassword], ""
	cfg := Config(root)
	cfg.InterpolateParams = true // ALTER USER takes no placeholders server-side
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("configure mysql client for root at %s: %w", root.Address, err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return setPasswords(ctx, db, []string{"root", srv.TCP().User}, srv.TCP().Password)
}

// setPasswords gives every account of users, at whichever hosts they
// exist for, the password pw.
func setPasswords(ctx context.Context, db *sql.DB, users []string, pw string) error {
	rows, err := db.QueryContext(ctx, "SELECT User, Host FROM mysql.user WHERE User IN (?, ?)", users[0], users[1])
	if err != nil {
		return fmt.Errorf("list the accounts of %s to change their bootstrap passwords: %w", strings.Join(users, ", "), err)
	}
	defer rows.Close()
	var clauses []string
	var args []any
	for rows.Next() {
		var user, host string
		if err := rows.Scan(&user, &host); err != nil {
			return fmt.Errorf("list the accounts of %s: %w", strings.Join(users, ", "), err)
		}
		clauses = append(clauses, "?@? IDENTIFIED BY ?")
		args = append(args, user, host, pw)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list the accounts of %s: %w", strings.Join(users, ", "), err)
	}
	if len(clauses) == 0 {
		return fmt.Errorf("mysql has no account for %s: the image's entrypoint did not create them; check its MYSQL_USER", strings.Join(users, ", "))
	}
	if _, err := db.ExecContext(ctx, "ALTER USER "+strings.Join(clauses, ", "), args...); err != nil {
		return fmt.Errorf("change the bootstrap passwords of %s to the run's: %w", strings.Join(users, ", "), err)
	}
	return nil
}
