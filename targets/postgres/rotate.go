package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// secretPassword names the container's secret file: the bootstrap
// password its entrypoint gives POSTGRES_USER.
const secretPassword = "postgres-password"

// rotate is the container's supply.Container.Rotate: once the server
// takes the run's or the bootstrap password over TCP (the real server, not
// the entrypoint's temporary one, which has no network), it logs in with
// the same over the Unix socket and gives the account (POSTGRES_USER, the
// image's superuser) the run's password, as a quoted literal over the
// connection. It does so after a restart too: the images trust loopback
// connections (initdb's default pg_hba.conf), so a login does not tell
// which password the account has.
func rotate(ctx context.Context, srv *supply.Server, bootstrap map[string]string) error {
	d := New(drivers.Workload{})
	ep := srv.TCP()
	if _, err := d.Info(ctx, ep); err != nil {
		ep.Password = bootstrap[secretPassword]
		if _, err := d.Info(ctx, ep); err != nil {
			return fmt.Errorf("log in to postgres at %s with neither the run's nor the bootstrap password (still starting?): %w", ep.Address, err)
		}
	}
	admin := srv.Unix()
	admin.Password = ep.Password
	cfg, err := Config(admin)
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("log in to postgres at %s to set the run's password: %w", admin.Address, err)
	}
	defer conn.Close(ctx)
	q := "ALTER ROLE " + pgx.Identifier{srv.TCP().User}.Sanitize() + " PASSWORD " + quoteLiteral(srv.TCP().Password)
	if _, err := conn.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("change the bootstrap password of role %s to the run's: %w", srv.TCP().User, err)
	}
	return nil
}

// quoteLiteral quotes s as a PostgreSQL string literal, whatever
// standard_conforming_strings says.
func quoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}
