package goagent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/agents/goagent"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets/redis"
)

// TestRequestsRefused: the agent says hello first, then answers each
// request it cannot do with an error naming what was wrong, and goes on;
// a request line over its limit ends it with an error.
func TestRequestsRefused(t *testing.T) {
	a, err := goagent.New(redis.New(3, false, drivers.Workload{}), "go-redis", "v9")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`not json`,
		`{"type":"dance"}`,
		`{"type":"block","id":"x","keys":["dbsock:user:1"],"value_length":5}`,
		`{"type":"load","ids":[]}`,
		`{"type":"overhead","n":0}`,
		`{"type":"overhead","n":3}`,
		`{"type":"open","id":"a","path":"tcp","network":"tcp","address":"10.0.0.1:6379","token":"t"}`,
		`{"type":"close","id":"b"}`,
	}, "\n")
	var out strings.Builder
	if err := a.Serve(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	var answers []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("answer %q: %v", sc.Text(), err)
		}
		answers = append(answers, m)
	}
	want := []struct{ typ, says string }{
		{agents.TypeHello, ""},
		{agents.TypeError, "not a JSON object"},
		{agents.TypeError, `type "dance"`},
		{agents.TypeError, "no connection x is open"},
		{agents.TypeError, "names no connection"},
		{agents.TypeError, "0 empty ops"},
		{agents.TypeOverheadResult, ""},
		{agents.TypeError, "is not a loopback address"},
		{agents.TypeError, "close b: no such connection"},
	}
	if len(answers) != len(want) {
		t.Fatalf("%d answers to %d requests: %s", len(answers), len(want)-1, out.String())
	}
	for i, w := range want {
		msg, _ := answers[i]["message"].(string)
		if answers[i]["type"] != w.typ || !strings.Contains(msg, w.says) {
			t.Errorf("answer %d: %v; want %s saying %q", i, answers[i], w.typ, w.says)
		}
	}
	if h := a.Hello(); h.Protocol != agents.Protocol || h.Capabilities == nil || h.Capabilities.Workers != goagent.Workers || h.Mode != "resp3" {
		t.Errorf("hello %+v; want protocol %d, a goroutine per connection, Go's mode", h, agents.Protocol)
	}
	long := `{"type":"overhead","n":1,"x":"` + strings.Repeat("x", goagent.MaxRequest) + `"}`
	if err := a.Serve(context.Background(), strings.NewReader(long), &out); err == nil || !strings.Contains(err.Error(), "request line over") {
		t.Errorf("a request over the limit: %v; want it refused", err)
	}
}
