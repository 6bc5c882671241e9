package echo

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// script is one connection's bytes as a client sends them, read in the
// chunks given, and what the server writes back.
type script struct {
	chunks [][]byte
	out    bytes.Buffer
}

func (s *script) read(b []byte) (int, error) {
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(b, s.chunks[0])
	if s.chunks[0] = s.chunks[0][n:]; len(s.chunks[0]) == 0 {
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

func (s *script) write(b []byte) error { _, err := s.out.Write(b); return err }

// answers are the server's frames written to s.
func (s *script) answers(t *testing.T) []string {
	t.Helper()
	var out []string
	for s.out.Len() > 0 {
		a, err := ReadFrame(&s.out)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func frameOf(t *testing.T, text string) []byte {
	t.Helper()
	b, err := Frame(text)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBeginHello: a hello, even split over reads and followed at once by
// the first message, is answered with the connection's number, and the
// message is handed back to echo; a find on another connection then finds
// it, until it is forgotten.
func TestBeginHello(t *testing.T) {
	r := NewRegistry()
	p := r.Accepted("unix", "@", 42)
	hello := frameOf(t, "hello tok-1")
	s := &script{chunks: [][]byte{hello[:1], hello[1:5], append(hello[5:], "ping"...)}}
	data, forget, ok := r.Begin(p, make([]byte, 512), s.read, s.write)
	if !ok || string(data) != "ping" {
		t.Fatalf("data %q, ok %v; want the message after the hello", data, ok)
	}
	if a := s.answers(t); len(a) != 1 || a[0] != "ok 1" {
		t.Fatalf("answers %q, want [ok 1]", a)
	}
	asker := &script{chunks: [][]byte{frameOf(t, "find tok-1"), frameOf(t, "find tok-2")}}
	if _, _, ok := r.Begin(r.Accepted("tcp", "127.0.0.1:9", 0), make([]byte, 512), asker.read, asker.write); ok {
		t.Error("an asking connection went on to the ping-pong")
	}
	if a := asker.answers(t); len(a) != 2 || a[0] != "found unix @ 1 pid 42" || a[1] != "none" {
		t.Fatalf("answers %q", a)
	}
	forget()
	if got := r.find("tok-1"); got != "none" {
		t.Errorf("after the connection closed: %q", got)
	}
}

// TestBeginPlain: a connection that sends no frame (dbsock's own driver)
// goes straight to the ping-pong, its first message handed back whole.
func TestBeginPlain(t *testing.T) {
	r := NewRegistry()
	s := &script{chunks: [][]byte{[]byte("ping")}}
	data, _, ok := r.Begin(r.Accepted("tcp", "127.0.0.1:9", 0), make([]byte, 512), s.read, s.write)
	if !ok || string(data) != "ping" || s.out.Len() != 0 {
		t.Fatalf("data %q, ok %v, wrote %q", data, ok, s.out.String())
	}
}

// TestBeginRefuses: a bad token, a second hello, a hello after a find,
// an unknown verb are answered with an error and end the connection; two
// connections of one token are "many".
func TestBeginRefuses(t *testing.T) {
	r := NewRegistry()
	for _, tc := range []struct {
		name   string
		frames []string
	}{
		{"no token", []string{"hello"}},
		{"space in token", []string{"hello a b"}},
		{"second hello", []string{"hello t1", "hello t2"}},
		{"hello after find", []string{"find t1", "hello t1"}},
		{"unknown", []string{"list t1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &script{}
			for _, f := range tc.frames {
				s.chunks = append(s.chunks, frameOf(t, f))
			}
			_, forget, ok := r.Begin(r.Accepted("tcp", "127.0.0.1:9", 0), make([]byte, 512), s.read, s.write)
			defer forget()
			a := s.answers(t)
			if ok || len(a) != len(tc.frames) || !strings.HasPrefix(a[len(a)-1], "error ") {
				t.Errorf("ok %v, answers %q; want the last an error and the connection ended", ok, a)
			}
		})
	}
	for range 2 {
		s := &script{chunks: [][]byte{frameOf(t, "hello twice")}}
		r.Begin(r.Accepted("tcp", "127.0.0.1:9", 0), make([]byte, 512), s.read, s.write)
	}
	if got := r.find("twice"); got != "many 2" {
		t.Errorf("find of a token two connections said: %q", got)
	}
}

func TestParseFoundAndCheckClaim(t *testing.T) {
	for _, tc := range []struct {
		answer string
		claim  drivers.Claim
		want   drivers.Transport
		err    string
	}{
		{"found unix @ 3 pid 77", drivers.Claim{ConnID: "3"}, drivers.Unix, ""},
		{"found tcp 127.0.0.1:4000 5", drivers.Claim{ConnID: "5", LocalAddr: "127.0.0.1:4000"}, drivers.TCP, ""},
		{"found tcp6 [::1]:4000 5", drivers.Claim{LocalAddr: "::1:4000"}, drivers.TCP6, ""},
		{"found tcp 127.0.0.1:4000 5", drivers.Claim{LocalAddr: "127.0.0.1:4001"}, drivers.TCP, "the floor server sees it from 127.0.0.1:4000"},
		{"found unix @ 3", drivers.Claim{ConnID: "4"}, drivers.Unix, "the server numbers the one with its token 3"},
		{"found udp x 3", drivers.Claim{}, "", "unknown network"},
		{"none", drivers.Claim{}, "", `answered "none"`},
		{"found unix @", drivers.Claim{}, "", "not NETWORK PEER ID"},
	} {
		p, err := ParseFound(tc.answer)
		var v drivers.Verification
		if err == nil {
			v, err = CheckClaim("floor server", p, tc.claim)
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q with %+v: %v, want an error with %q", tc.answer, tc.claim, err, tc.err)
			}
			continue
		}
		if err != nil || v.Transport != tc.want || !strings.Contains(v.Evidence, "floor server sees connection") {
			t.Errorf("%q with %+v: %+v, %v; want %s", tc.answer, tc.claim, v, err, tc.want)
		}
	}
}

func TestFrameTooLong(t *testing.T) {
	if _, err := Frame(strings.Repeat("x", 256)); err == nil {
		t.Error("a frame of 256 bytes")
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{5, 'a'})); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a cut frame: %v", err)
	}
}
