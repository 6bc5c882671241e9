package agents_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/targets"
)

// aliasTarget is a target only the tests register, and that no stack's
// files name: a server that speaks Redis's protocol under a name of its
// own (as a fork of Redis, or a proxy in front of one, would), served by
// the redis target's recipe and measured by its driver.
const aliasTarget = "valkeylike"

func init() {
	rt, ok := targets.Lookup("redis")
	if !ok {
		panic("the agents' tests register " + aliasTarget + " as the redis target's alias, and no redis target is registered")
	}
	alias := *rt
	alias.Name = aliasTarget
	alias.InAll, alias.Kind = false, nil
	targets.Register(alias)
}

// stackTarget is the tests' knowledge of target name: stackTargets', or
// for aliasTarget the redis target's under its name.
func stackTarget(name string) (target, bool) {
	look := name
	if name == aliasTarget {
		look = "redis"
	}
	i := slices.IndexFunc(stackTargets, func(tg target) bool { return tg.name == look })
	if i < 0 {
		return target{}, false
	}
	tg := stackTargets[i]
	tg.name = name
	return tg, true
}

// withoutAlias are claims less those of aliasTarget, which
// TestTargetOfAKnownFamily checks.
func withoutAlias(claims []agents.Claim) []agents.Claim {
	return slices.DeleteFunc(slices.Clone(claims), func(c agents.Claim) bool { return c.Target == aliasTarget })
}

// TestTargetOfAKnownFamily: a target registered here, in the test only,
// whose driver speaks Redis's protocol, is measured from every stack that
// speaks Redis's with no change to any stack's file: each claims it with
// the libraries it has for redis, starts its agent with the family
// (redis), not the target's name, and passes the conformance suite on it
// against a real Redis; a stack with no library for the family says so,
// naming the target.
func TestTargetOfAKnownFamily(t *testing.T) {
	if f, err := agents.Family(aliasTarget); f != "redis" || err != nil {
		t.Fatalf("the family of %s: %q, %v; want redis", aliasTarget, f, err)
	}
	stacks, err := agents.Stacks(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stacks {
		files, _ := filepath.Glob(filepath.Join(s, "*"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(aliasTarget)) {
				t.Fatalf("%s names %s: the test would prove nothing", f, aliasTarget)
			}
		}
	}
	claims, err := agents.Claims(".")
	if err != nil {
		t.Fatal(err)
	}
	var alias []agents.Claim
	var speakers []string
	for _, c := range claims {
		switch c.Target {
		case aliasTarget:
			alias = append(alias, c)
		case "redis":
			speakers = append(speakers, c.Stack+":"+c.Library)
		}
	}
	var got []string
	for _, c := range alias {
		got = append(got, c.Stack+":"+c.Library)
	}
	if len(speakers) < 5 || !slices.Equal(got, speakers) {
		t.Fatalf("the stacks claim %s with %v; want what they claim redis with, %v (c, python, node, php and ruby at least)", aliasTarget, got, speakers)
	}
	if _, err := agents.Library(".", "java", aliasTarget, family(aliasTarget), ""); err == nil || !strings.Contains(err.Error(), "no client library for "+aliasTarget+": Debian packages no Java Redis client") {
		t.Errorf("java, which has no Redis client, for %s: %v; want the reason, naming the target", aliasTarget, err)
	}
	if err := agents.Installed("."); err != nil {
		needStack(t, err)
	}
	for _, c := range alias {
		spec, err := agents.For(".", c.Stack, c.Target, family(c.Target), c.Library)
		if err != nil {
			needStack(t, err)
		}
		if n := len(spec.Argv); n < 2 || spec.Argv[n-2] != "redis" || spec.Argv[n-1] != c.Library {
			t.Errorf("the %s agent for %s is started as %q; want it to end with its family and library, redis %s", c.Stack, aliasTarget, spec.Argv, c.Library)
		}
	}
	conformClaims(t, ".", alias, func(t *testing.T, c agents.Claim, rs []agents.Result) {
		for _, r := range rs {
			if r.Target != aliasTarget || !strings.Contains(r.Line(), aliasTarget+" from ") {
				t.Errorf("a result of %s names another target: %s", aliasTarget, r.Line())
			}
		}
		conformant(t, c, rs)
	})
}
