// Command mongod stands in for MongoDB's mongod in the tests of the local
// provider, on a machine without MongoDB: it translates the mongod flags
// dbsock passes into FerretDB's (ferretdb on PATH, SQLite in --dbpath)
// and, with --auth, has every command but the handshake need a login
// (FerretDB's SCRAM authentication).
//
// FerretDB has no localhost exception, which dbsock relies on to make
// mongod's first user: with --auth, enableLocalhostAuthBypass not false and
// no user yet, this program emulates it on the Unix sockets of --bind_ip.
// FerretDB then runs with a set-up user of this program's own, on a socket
// in --dbpath, and this program relays every message to it but one
// createUser, which it runs logged in as that user; then it drops that
// user, and the exception is closed (as mongod's is once a user exists).
package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

const bootstrapUser = "standin-bootstrap"

type flags struct {
	auth                        bool
	dbpath, port, prefix, perms string
	ips, sockets                []string
	params                      map[string]string
}

func parse(args []string) (flags, error) {
	f := flags{dbpath: "/data/db", port: "27017", prefix: "/tmp", perms: "0700", params: map[string]string{}}
	bind := "127.0.0.1"
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			i++
			if i < len(args) {
				return args[i]
			}
			return ""
		}
		switch a {
		case "--auth":
			f.auth = true
		case "--ipv6", "--quiet":
		case "--dbpath":
			f.dbpath = next()
		case "--port":
			f.port = next()
		case "--bind_ip":
			bind = next()
		case "--unixSocketPrefix":
			f.prefix = next()
		case "--filePermissions":
			f.perms = next()
		case "--setParameter":
			k, v, _ := strings.Cut(next(), "=")
			f.params[k] = v
		default:
			return f, fmt.Errorf("mongod stand-in: flag %q not translated", a)
		}
	}
	loopback := false
	for _, b := range strings.Split(bind, ",") {
		switch {
		case strings.HasPrefix(b, "/"):
			f.sockets = append(f.sockets, b)
		case b != "":
			f.ips = append(f.ips, b)
			loopback = loopback || b == "127.0.0.1" || b == "localhost"
		}
	}
	if loopback { // mongod's own socket, beside those of --bind_ip
		f.sockets = append(f.sockets, filepath.Join(f.prefix, "mongodb-"+f.port+".sock"))
	}
	return f, nil
}

// ferretdb are FerretDB's flags listening at tcp ("": none) and socket.
func (f flags) ferretdb(tcp, socket string) []string {
	args := []string{"--handler=sqlite", "--sqlite-url=file:" + f.dbpath + "/", "--state-dir=" + f.dbpath,
		"--listen-addr=" + tcp, "--listen-unix=" + socket, "--telemetry=disable", "--log-level=warn", "--debug-addr=-"}
	if f.auth {
		args = append(args, "--test-enable-new-auth")
	}
	return args
}

func main() {
	f, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if len(f.sockets) > 1 || len(f.sockets) == 0 {
		fmt.Fprintf(os.Stderr, "mongod stand-in: FerretDB serves one Unix socket, not %v\n", f.sockets)
		os.Exit(2)
	}
	perms, _ := strconv.ParseUint(f.perms, 8, 32)
	syscall.Umask(int(0o777 &^ perms))
	bin, err := exec.LookPath("ferretdb")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mongod stand-in:", err)
		os.Exit(1)
	}
	tcp := ""
	if len(f.ips) > 0 {
		tcp = f.ips[0] + ":" + f.port
	}
	_, statErr := os.Stat(filepath.Join(f.dbpath, "admin.sqlite"))
	exception := f.auth && f.params["enableLocalhostAuthBypass"] != "false" && errors.Is(statErr, os.ErrNotExist)
	if !exception {
		err = syscall.Exec(bin, append([]string{"ferretdb"}, f.ferretdb(tcp, f.sockets[0])...), os.Environ())
		fmt.Fprintln(os.Stderr, "mongod stand-in:", err)
		os.Exit(1)
	}
	if err := withException(bin, f, tcp); err != nil {
		fmt.Fprintln(os.Stderr, "mongod stand-in:", err)
		os.Exit(1)
	}
}

// withException runs FerretDB behind the emulated localhost exception
// until SIGTERM or SIGINT.
func withException(bin string, f flags, tcp string) error {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	password := hex.EncodeToString(b)
	backend := filepath.Join(f.dbpath, "standin-backend.sock")
	cmd := exec.Command(bin, append(f.ferretdb(tcp, backend), "--setup-database=admin", "--setup-username="+bootstrapUser)...)
	cmd.Env = append(os.Environ(), "FERRETDB_SETUP_PASSWORD="+password)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	for i := 0; ; i++ {
		if c, err := net.Dial("unix", backend); err == nil {
			c.Close()
			break
		}
		if i > 600 {
			return errors.New("FerretDB did not listen within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ln, err := net.Listen("unix", f.sockets[0])
	if err != nil {
		return err
	}
	defer ln.Close()
	opts := options.Client().SetHosts([]string{backend}).SetDirect(true).
		SetAuth(options.Credential{Username: bootstrapUser, Password: password})
	admin, err := mongo.Connect(opts)
	if err != nil {
		return err
	}
	defer admin.Disconnect(context.Background())
	ex := &exceptionState{admin: admin}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go relay(c, backend, ex)
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return nil
}

// exceptionState is the emulated exception: open until one createUser.
type exceptionState struct {
	mu     sync.Mutex
	closed bool
	admin  *mongo.Client
}

// createUser runs cmd (a createUser of the client's, on db) as the
// bootstrap user, then drops that user: the exception closes.
func (ex *exceptionState) createUser(db string, cmd bson.D) bson.D {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.closed {
		return nil
	}
	ex.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range cmd {
		if cmd[i].Key == "roles" {
			cmd[i].Value = bson.A{} // FerretDB has no roles
		}
	}
	if err := ex.admin.Database(db).RunCommand(ctx, cmd).Err(); err != nil {
		return bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: err.Error()}, {Key: "code", Value: 8}}
	}
	if err := ex.admin.Database("admin").RunCommand(ctx, bson.D{{Key: "dropUser", Value: bootstrapUser}}).Err(); err != nil {
		return bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "drop the stand-in's own user: " + err.Error()}, {Key: "code", Value: 8}}
	}
	return bson.D{{Key: "ok", Value: 1.0}}
}

// relay passes c's messages to FerretDB at backend and its answers back,
// but a createUser while the exception is open, which it answers itself.
func relay(c net.Conn, backend string, ex *exceptionState) {
	defer c.Close()
	b, err := net.Dial("unix", backend)
	if err != nil {
		return
	}
	defer b.Close()
	go func() { _, _ = io.Copy(c, b) }()
	for {
		msg, err := readMsg(c)
		if err != nil {
			return
		}
		if db, cmd, ok := createUserOf(msg); ok {
			if reply := ex.createUser(db, cmd); reply != nil {
				if _, err := c.Write(opMsg(binary.LittleEndian.Uint32(msg[4:8]), reply)); err != nil {
					return
				}
				continue
			}
		}
		if _, err := b.Write(msg); err != nil {
			return
		}
	}
}

// readMsg reads one wire protocol message.
func readMsg(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n < 16 || n > 48<<20 {
		return nil, fmt.Errorf("message of %d bytes", n)
	}
	msg := make([]byte, n)
	copy(msg, hdr[:])
	_, err := io.ReadFull(r, msg[4:])
	return msg, err
}

// createUserOf is the command of an OP_MSG whose body is a createUser, and
// its database.
func createUserOf(msg []byte) (string, bson.D, bool) {
	if binary.LittleEndian.Uint32(msg[12:16]) != 2013 || len(msg) < 26 || msg[20] != 0 {
		return "", nil, false
	}
	doc := bson.Raw(msg[21:])
	if err := doc.Validate(); err != nil {
		n := binary.LittleEndian.Uint32(msg[21:25])
		if int(n) > len(msg)-21 {
			return "", nil, false
		}
		doc = bson.Raw(msg[21 : 21+n])
	}
	elems, err := doc.Elements()
	if err != nil || len(elems) == 0 || elems[0].Key() != "createUser" {
		return "", nil, false
	}
	var cmd bson.D
	db := "admin"
	for _, e := range elems {
		switch k := e.Key(); {
		case k == "$db":
			db = e.Value().StringValue()
		case strings.HasPrefix(k, "$") || k == "lsid":
		default:
			var v any
			if err := e.Value().Unmarshal(&v); err != nil {
				return "", nil, false
			}
			cmd = append(cmd, bson.E{Key: k, Value: v})
		}
	}
	return db, cmd, true
}

// opMsg is an OP_MSG answering request id to with doc.
func opMsg(to uint32, doc bson.D) []byte {
	body, _ := bson.Marshal(doc)
	out := make([]byte, 21, 21+len(body))
	binary.LittleEndian.PutUint32(out[0:], uint32(21+len(body)))
	binary.LittleEndian.PutUint32(out[4:], 1)
	binary.LittleEndian.PutUint32(out[8:], to)
	binary.LittleEndian.PutUint32(out[12:], 2013)
	return append(out, body...)
}
