package supply

// dbsock's client in a container (--client container): dbsock's own agent
// runs in a container on the same engine as the servers, beside them as an
// application container beside its database or proxy sidecar. It shares
// the servers' socket directories (the same host directories, mounted at
// the same paths) and the engine's host network (so 127.0.0.1 is the same
// loopback), and nothing else of the host's: its own PID namespace (dbsock
// on the host reads its agent's CPU time, finding the agent's process by
// the pid its hello says in the container: AgentPID), no capability (not
// CAP_NET_RAW, which in the host's network namespace would read loopback
// traffic, nor CAP_KILL), no new privileges, a read-only root filesystem
// (its agent writes nothing), and an unprivileged user that can still
// reach the sockets (clientUser). Its first process, dbsock agent --wait,
// ends when the dbsock that started it is gone: it reads the stdin that
// dbsock holds (ContainerRequest.HoldStdin).

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
)

// ClientOptions say how to start dbsock's client container.
type ClientOptions struct {
	// Binary is a Linux build of dbsock for the engine's architecture (""
	// means this executable): the image holds it and nothing else when it
	// is statically linked.
	Binary string
	// Dirs are host directories the client reaches (the server's socket
	// directory), each mounted at the same path in the container.
	Dirs []string
	// CPUs, when set, become the container's cpuset (the client's
	// placement).
	CPUs []int
	// Target names what the client measures, for its label and errors.
	Target string
}

// ClientContainer is a running client container: dbsock's own agent runs
// in it (AgentArgv).
type ClientContainer struct {
	c      RunningContainer
	image  string
	tag    string // the run's own tag of image
	user   string // "uid:gid"
	why    string // why user is root's, when it is
	socket string
	pid    int
}

// ClientBase is the image a dynamically linked dbsock runs on (it needs
// the C library): the base image "make images" builds from Debian's
// packages. A static dbsock (CGO_ENABLED=0, as make build makes it) needs
// no base.
const ClientBase = "dbsock/base:bookworm"

// StartClient starts dbsock's client container on the engine at
// $DOCKER_HOST or /var/run/docker.sock; the image is built from
// o.Binary the first time (its tag is the binary's hash, so a rebuilt
// dbsock gets its own image). The container idles until Stop; each
// agent is a command run in it (AgentArgv).
func StartClient(ctx context.Context, o ClientOptions) (*ClientContainer, error) {
	eng := ProbeEngine(ctx, 10*time.Second)
	if !eng.Reachable {
		return nil, fmt.Errorf("start dbsock's client container: %s", eng.Unusable())
	}
	if err := eng.CannotRun(EngineNeeds{}, true); err != nil {
		return nil, err
	}
	binary := o.Binary
	if binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("start dbsock's client container: find this executable: %w", err)
		}
		binary = exe
	}
	image, err := clientImage(ctx, eng, binary)
	if err != nil {
		return nil, setting.Err("start dbsock's client container: %w", err)
	}
	// The run's own tag keeps the image while the run lasts: another
	// dbsock that removes this image's tag (a run of another build) only
	// untags it.
	tag, err := tagForRun(ctx, eng, binary, image)
	if err != nil {
		return nil, setting.Err("start dbsock's client container: %w", err)
	}
	// The client enters no other container's network namespace and sees
	// no other process: it needs no capability at all (its connections
	// are a user's, its pinning the engine's cpuset).
	req := ContainerRequest{Image: tag, Cmd: []string{"agent", "--wait"},
		Labels: map[string]string{Label: "1", RunLabel: strconv.FormatInt(time.Now().UnixNano(), 36), Label + ".target": "client:" + o.Target,
			PIDLabel: strconv.Itoa(os.Getpid()), OwnerLabel: OwnerOn(ctx, eng.Socket).String()},
		HostNetwork: true, CPUs: placement.FormatList(o.CPUs),
		CapDrop: []string{"ALL"}, NoNewPrivileges: true, ReadOnly: true, HoldStdin: true}
	for _, d := range o.Dirs {
		req.Binds = append(req.Binds, d+":"+d)
	}
	var why string
	req.User, why = clientUser(o.Dirs)
	c, err := runContainer(ctx, req)
	cc := &ClientContainer{c: c, image: image, tag: tag, user: req.User, why: why, socket: eng.Socket}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start dbsock's client container from %s: %w", image, err), cc.Stop(context.Background()))
	}
	if st, err := c.Inspect(ctx); err == nil {
		cc.pid = st.Pid
	}
	return cc, nil
}

// AgentExecArg, as the first argument of dbsock's binary in an agent's
// process, makes it the bridge to a command in the client container
// (package supply/containers): AgentArgv.
const AgentExecArg = "dbsock-agent-exec"

// AgentArgv is the command line of an agent (package agents) that runs
// dbsock in the container with args, its stdin and stdout those of the
// process this host starts: dbsock's own binary (/proc/self/exe) as the
// bridge that execs it there.
func (c *ClientContainer) AgentArgv(args ...string) []string {
	return append([]string{"/proc/self/exe", AgentExecArg, c.socket, c.c.ID(), "/dbsock"}, args...)
}

// AgentPID is the process, as this host numbers it, that the agent in the
// container says is pid in the container's own PID namespace: the one
// process of the container's cgroup whose innermost pid (NSpid, the last
// of /proc/PID/status) is pid. Its CPU time is read as the client's.
func (c *ClientContainer) AgentPID(pid int) (int, error) {
	if pid <= 0 || c.pid <= 0 {
		return 0, fmt.Errorf("the agent in the client container said pid %d, the container's first process is %d: neither can be read", pid, c.pid)
	}
	mine, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", c.pid))
	if err != nil {
		return 0, fmt.Errorf("read the cgroup of the client container's first process (pid %d): %w", c.pid, err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	want := strconv.Itoa(pid)
	for _, p := range procs {
		ns := nsPIDs(filepath.Join(p, "status"))
		if len(ns) < 2 || ns[len(ns)-1] != want {
			continue
		}
		if its, err := os.ReadFile(filepath.Join(p, "cgroup")); err == nil && bytes.Equal(its, mine) {
			return strconv.Atoi(filepath.Base(p))
		}
	}
	return 0, fmt.Errorf("the agent said pid %d in the client container, and no process of the container's cgroup (%s) is pid %d of its PID namespace", pid, strings.TrimSpace(string(mine)), pid)
}

// nobody is the user and group the client container runs as when dbsock
// is root and the sockets are open to every user: it owns nothing.
const nobody = 65534

// clientUser is who the client container's processes run as ("uid:gid"),
// and, where it is root, why: this user; or, when dbsock is root, a user
// that owns nothing (nobody) where every socket in dirs is open to every
// user (a container server's, 0777), else the owner of the sockets that
// are not (the local provider's are root's alone, 0700: root then, without
// a capability).
func clientUser(dirs []string) (user, why string) {
	if os.Getuid() != 0 {
		return fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), ""
	}
	owners := map[string]string{} // owner: a directory of its
	for _, d := range dirs {
		if o, ok := closedOwner(d); ok {
			owners[o] = d
		}
	}
	switch {
	case len(owners) == 0:
		return fmt.Sprintf("%d:%d", nobody, nobody), ""
	case len(owners) > 1:
		return "0:0", "root, without a capability: the sockets it reaches have owners of their own and are not open to every user"
	}
	for o, d := range owners {
		if o == "0:0" {
			why = "root, without a capability: " + d + " or its socket is root's alone"
		}
		user = o
	}
	return user, why
}

// closedOwner is the owner ("uid:gid") of dir, or of its first socket,
// when one of them is not open to every user (dir searchable, the socket
// writable by others); ok is false when all are.
func closedOwner(dir string) (owner string, ok bool) {
	of := func(fi os.FileInfo) string {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return fmt.Sprintf("%d:%d", st.Uid, st.Gid)
		}
		return "0:0"
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "0:0", true
	}
	if fi.Mode().Perm()&0o001 == 0 {
		return of(fi), true
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Type()&os.ModeSocket == 0 {
			continue
		}
		if info, err := e.Info(); err == nil && info.Mode().Perm()&0o002 == 0 {
			return of(info), true
		}
	}
	return "", false
}

// PID is the container's first process as the host sees it (0: unknown).
func (c *ClientContainer) PID() int { return c.pid }

// Place says where the client runs, for the report.
func (c *ClientContainer) Place() string {
	cpus := ""
	if st, err := c.c.Inspect(context.Background()); err == nil && st.CPUs != "" {
		cpus = ", cpuset " + st.CPUs
	}
	as := c.user
	if c.why != "" {
		as += ": " + c.why
	}
	return fmt.Sprintf("docker container %s from image %s (host network, its own PID namespace, no capabilities, no new privileges, read-only root filesystem, socket directory bind-mounted, as uid:gid %s%s)",
		shortContainerID(c.c.ID()), c.image, as, cpus)
}

// Stop removes the container and the run's tag of its image.
func (c *ClientContainer) Stop(ctx context.Context) error {
	if c == nil {
		return nil
	}
	var err error
	if c.c != nil {
		err = c.c.Remove(ctx, time.Second)
		c.c = nil
	}
	if c.tag != "" {
		untag(ctx, c.socket, c.tag)
		c.tag = ""
	}
	return err
}

// runTag is the tag of image that this run holds: the image's own tag,
// then this dbsock's pid and start time, which dbsock clean and other
// runs judge as an Owner.
func runTag(image string) string {
	o := Self()
	return fmt.Sprintf("%s-%d-%d", image, o.PID, o.Start)
}

// tagForRun gives image (built from binary) the run's own tag and returns
// it; when another dbsock removed image in the meantime, it builds it
// again, once.
func tagForRun(ctx context.Context, eng Engine, binary, image string) (string, error) {
	tag := runTag(image)
	repo, name, _ := strings.Cut(tag, ":")
	for attempt := 0; ; attempt++ {
		resp, err := DockerAPI(ctx, eng.Socket, http.MethodPost, "/images/"+url.PathEscape(image)+"/tag?repo="+url.QueryEscape(repo)+"&tag="+url.QueryEscape(name))
		if err != nil {
			return "", fmt.Errorf("tag the client image %s for this run: %w", image, err)
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode < 300:
			return tag, nil
		case resp.StatusCode != http.StatusNotFound || attempt > 0:
			return "", fmt.Errorf("tag the client image %s for this run: the Docker engine answered %s", image, resp.Status)
		}
		if image, err = clientImage(ctx, eng, binary); err != nil {
			return "", err
		}
	}
}

// untag removes one tag (the image goes with its last tag, unless a
// container uses it).
func untag(ctx context.Context, socket, tag string) {
	if resp, err := DockerAPI(ctx, socket, http.MethodDelete, "/images/"+url.PathEscape(tag)+"?noprune=0"); err == nil {
		resp.Body.Close()
	}
}

// runTagOwner reads the owner from a run's tag of a client image
// (dbsock/client:HASH-PID-START); ok is false for an image's own tag.
func runTagOwner(tag string) (Owner, bool) {
	_, name, _ := strings.Cut(tag, ":")
	f := strings.Split(name, "-")
	if len(f) != 3 {
		return Owner{}, false
	}
	pid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return Owner{}, false
	}
	return Owner{PID: pid, Start: start}, true
}

// elfMachines are the engine's architecture names by ELF machine.
var elfMachines = map[elf.Machine][]string{
	elf.EM_X86_64:  {"x86_64", "amd64"},
	elf.EM_AARCH64: {"aarch64", "arm64"},
}

// clientBinary checks that binary can run in the engine's containers and
// says whether it is statically linked.
func clientBinary(binary, arch string) (static bool, err error) {
	build := "GOOS=linux GOARCH=" + goArch(arch) + " CGO_ENABLED=0 go build -o dbsock-linux ./cmd/dbsock, then give dbsock-linux as"
	// Only a regular file is opened: a FIFO would block the open.
	if fi, err := os.Stat(binary); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		what := "not a regular file"
		switch {
		case err != nil:
			what = err.Error()
		case fi.Mode().IsRegular():
			what = "empty"
		}
		return false, setting.Err("%s is not a Linux executable (%s): build one with %s %s", binary, what, build, setting.ClientBinary)
	}
	f, err := elf.Open(binary)
	if err != nil {
		return false, setting.Err("%s is not a Linux executable (%v; this dbsock was built for %s/%s), and the client container runs Linux: build one with %s %s",
			binary, err, runtime.GOOS, runtime.GOARCH, build, setting.ClientBinary)
	}
	defer f.Close()
	names, ok := elfMachines[f.Machine]
	if !ok || (arch != "" && arch != names[0] && arch != names[1]) {
		return false, setting.Err("%s is built for %s, the engine runs %s: build one with %s %s", binary, f.Machine, arch, build, setting.ClientBinary)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	return true, nil
}

// CheckClientBinary checks, before anything starts, that binary is a Linux
// executable for an architecture the client container can run (amd64 or
// arm64; the engine's own is checked again when the client starts).
func CheckClientBinary(binary string) error {
	_, err := clientBinary(binary, "")
	return err
}

func goArch(arch string) string {
	if arch == "aarch64" || arch == "arm64" {
		return "arm64"
	}
	return "amd64"
}

// clientImage returns the client image for binary, building it when it is
// not on the engine yet: FROM scratch for a static binary, FROM ClientBase
// (which must be here) for a dynamic one.
func clientImage(ctx context.Context, eng Engine, binary string) (string, error) {
	static, err := clientBinary(binary, eng.Arch)
	if err != nil {
		return "", err
	}
	exe, err := os.ReadFile(binary)
	if err != nil {
		return "", fmt.Errorf("read %s for the client image: %w", binary, err)
	}
	base := "scratch"
	if !static {
		base = ClientBase
		if !imagePresent(ctx, eng.Socket, base) {
			return "", setting.Err("%s is dynamically linked (built with cgo) and needs the C library of %s, which is not here: build a static dbsock (CGO_ENABLED=0 go build ./cmd/dbsock, as make build does) and give it as %s, or run make images", binary, base, setting.ClientBinary)
		}
	}
	sum := sha256.Sum256(append([]byte(base+"\n"), exe...))
	image := "dbsock/client:" + hex.EncodeToString(sum[:])[:12]
	if imagePresent(ctx, eng.Socket, image) {
		return image, nil
	}
	dockerfile := fmt.Sprintf("FROM %s\nCOPY dbsock /dbsock\nLABEL dbsock.image=1 org.opencontainers.image.title=\"dbsock client\"\nENTRYPOINT [\"/dbsock\"]\n", base)
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	for _, f := range []struct {
		name string
		mode int64
		body []byte
	}{{"Dockerfile", 0o644, []byte(dockerfile)}, {"dbsock", 0o755, exe}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body))}); err != nil {
			return "", err
		}
		if _, err := tw.Write(f.body); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := buildImage(ctx, eng.Socket, image, &ctxTar); err != nil {
		return "", fmt.Errorf("build the client image %s from %s: %w", image, binary, err)
	}
	removeOtherClientImages(ctx, eng.Socket, image)
	return image, nil
}

// removeOtherClientImages removes the tags of the client images of other
// dbsock binaries (each build of dbsock makes its own), and the tags of
// runs shown to be over: an image goes with its last tag, so one a run
// still holds (by its own tag, or a container) stays.
func removeOtherClientImages(ctx context.Context, socket, keep string) {
	for _, tag := range clientTags(ctx, socket) {
		if o, ok := runTagOwner(tag); ok {
			if live, _ := o.Judge(ctx, socket); live == OwnerDead {
				untag(ctx, socket, tag)
			}
			continue
		}
		if tag != keep {
			untag(ctx, socket, tag)
		}
	}
}

// clientTags lists the tags of dbsock's client images.
func clientTags(ctx context.Context, socket string) []string {
	resp, err := DockerAPI(ctx, socket, http.MethodGet, "/images/json?filters="+url.QueryEscape(`{"reference":["dbsock/client"]}`))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var list []struct {
		RepoTags []string
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&list); err != nil {
		return nil
	}
	var tags []string
	for _, img := range list {
		for _, tag := range img.RepoTags {
			if strings.HasPrefix(tag, "dbsock/client:") {
				tags = append(tags, tag)
			}
		}
	}
	return tags
}

// DeadRunTags lists the tags of client images that runs shown to be over
// (Owner.Judge) held: what dbsock clean removes (RemoveTag).
func DeadRunTags(ctx context.Context, socket string) []string {
	var dead []string
	for _, tag := range clientTags(ctx, socket) {
		if o, ok := runTagOwner(tag); ok {
			if live, _ := o.Judge(ctx, socket); live == OwnerDead {
				dead = append(dead, tag)
			}
		}
	}
	return dead
}

// RemoveTag removes one tag of an image (the image goes with its last
// tag, unless a container uses it).
func RemoveTag(ctx context.Context, socket, tag string) { untag(ctx, socket, tag) }

// buildImage sends a build context (a tar holding a Dockerfile) to the
// engine's /build and reads its answer to the end.
func buildImage(ctx context.Context, socket, tag string, context io.Reader) error {
	resp, err := dockerRequest(ctx, socket, http.MethodPost, "/build?rm=1&forcerm=1&t="+url.QueryEscape(tag), context, 5*time.Minute)
	if err != nil {
		return err
	}
	if err := streamError(resp); err != nil {
		return err
	}
	if !imagePresent(ctx, socket, tag) {
		return errors.New("the build ended without the image")
	}
	return nil
}
