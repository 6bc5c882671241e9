package supply

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRunTagNamesItsOwner(t *testing.T) {
	tag := runTag("dbsock/client:0123456789ab")
	o, ok := runTagOwner(tag)
	if !ok || o.PID != Self().PID || o.Start != Self().Start {
		t.Fatalf("runTagOwner(%q) = %+v, %v", tag, o, ok)
	}
	for _, own := range []string{"dbsock/client:0123456789ab", "dbsock/client:0123456789ab-x-1", "dbsock/client:a-0-1"} {
		if _, ok := runTagOwner(own); ok {
			t.Errorf("runTagOwner(%q) took an image's own tag for a run's", own)
		}
	}
}

// TestClientImageOutlivesItsTagWhileARunHoldsIt: another dbsock that
// removes a client image's own tag leaves the image to the run that
// tagged it for itself; a run's tag whose dbsock is gone is what clean
// removes, a live run's is not.
func TestClientImageOutlivesItsTagWhileARunHoldsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("uses the Docker engine; skipped with -short")
	}
	ctx := context.Background()
	eng := ProbeEngine(ctx, 5*time.Second)
	if !eng.Reachable || !imagePresent(ctx, eng.Socket, ClientBase) {
		t.Skip("needs the Docker engine and " + ClientBase)
	}
	image := fmt.Sprintf("dbsock/client:t%011d", time.Now().UnixNano()%1e11)
	dead := Owner{PID: 1, Start: 1 << 40} // a start time no process here has
	deadTag := fmt.Sprintf("%s-%d-%d", image, dead.PID, dead.Start)
	for _, tag := range []string{image, deadTag} {
		if out, err := exec.Command("docker", "tag", ClientBase, tag).CombinedOutput(); err != nil {
			t.Fatalf("docker tag: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("docker", "rmi", "--no-prune", tag).Run() })
	}
	live, err := tagForRun(ctx, eng, "", image)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { untag(ctx, eng.Socket, live) })
	if live != runTag(image) || !imagePresent(ctx, eng.Socket, live) {
		t.Fatalf("tagForRun = %q, want %q, present", live, runTag(image))
	}
	untag(ctx, eng.Socket, image) // another build's run removes it
	if !imagePresent(ctx, eng.Socket, live) {
		t.Fatal("removing the image's own tag took the image from the run that holds it")
	}
	tags := DeadRunTags(ctx, eng.Socket)
	if !slices.Contains(tags, deadTag) {
		t.Errorf("DeadRunTags %v leaves out %s, whose pid %d started at tick %d is not running", tags, deadTag, dead.PID, dead.Start)
	}
	if slices.Contains(tags, live) {
		t.Errorf("DeadRunTags %v has this live run's %s", tags, live)
	}
	if !strings.HasSuffix(live, "-"+strconv.Itoa(Self().PID)+"-"+strconv.FormatUint(Self().Start, 10)) {
		t.Errorf("the run's tag %s does not name this dbsock", live)
	}
}
