package main

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/yaml"
)

const committed = "dbsock-fleet.yaml"

// TestCommittedManifestIsWhatTheGeneratorWrites: dbsock-fleet.yaml is
// what go generate writes now; a change to fleet.go needs it written
// again.
func TestCommittedManifestIsWhatTheGeneratorWrites(t *testing.T) {
	want, err := Manifest(Defaults, command([]string{"-o", committed}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what the generator writes now: run go generate in deploy/kubernetes and commit it", committed)
	}
}

// strictJob decodes a manifest as the API server does with strict field
// validation (apimachinery's strict YAML decoder, into the API's Job
// type): a field the type does not have, a field in another case, or a
// field given twice is an error.
func strictJob(t *testing.T, manifest []byte) (*batchv1.Job, error) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	decoder := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Yaml: true, Strict: true})
	obj, gvk, err := decoder.Decode(manifest, nil, nil)
	if err != nil {
		return nil, err
	}
	job, ok := obj.(*batchv1.Job)
	if !ok {
		t.Fatalf("decoded a %v, not a Job", gvk)
	}
	return job, nil
}

// TestManifestDecodesStrictly: the committed manifest is a Job in every
// field, an Indexed one of a pod per node, each pod the server, dbsock
// and the result container, as fleet.go means it.
func TestManifestDecodesStrictly(t *testing.T) {
	raw, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	job, err := strictJob(t, raw)
	if err != nil {
		t.Fatalf("%s does not decode strictly into a batch/v1 Job: %v", committed, err)
	}
	s := job.Spec
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion ||
		*s.Completions != int32(Defaults.Nodes) || *s.Parallelism != int32(Defaults.Nodes) {
		t.Errorf("%s %s: completion mode %v, completions %v, parallelism %v; want an Indexed Job of %d and %d", job.APIVersion, job.Kind, s.CompletionMode, *s.Completions, *s.Parallelism, Defaults.Nodes, Defaults.Nodes)
	}
	p := s.Template.Spec
	terms := p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 1 || terms[0].TopologyKey != "kubernetes.io/hostname" || !matches(terms[0].LabelSelector.MatchLabels, s.Template.Labels) {
		t.Errorf("anti-affinity %+v: want one required term on kubernetes.io/hostname selecting the Job's own pods (%v)", terms, s.Template.Labels)
	}
	if len(p.InitContainers) != 2 || len(p.Containers) != 1 {
		t.Fatalf("%d init containers and %d containers, want the server and dbsock, then the result", len(p.InitContainers), len(p.Containers))
	}
	server, client, result := p.InitContainers[0], p.InitContainers[1], p.Containers[0]
	if server.RestartPolicy == nil || *server.RestartPolicy != corev1.ContainerRestartPolicyAlways || server.StartupProbe == nil || client.RestartPolicy != nil {
		t.Errorf("the server %q must be a sidecar with a startup probe, dbsock %q a plain init container after it", server.Name, client.Name)
	}
	if !slices.Contains(client.Args, "$(NODE_NAME)") || !hasEnvFrom(client, "NODE_NAME", "spec.nodeName") {
		t.Errorf("dbsock's args %v and env %v: want --host $(NODE_NAME), NODE_NAME from spec.nodeName", client.Args, client.Env)
	}
	if socketDir(server) == "" || socketDir(server) != socketDir(client) || !isEmptyDir(p, socketDir(server)) {
		t.Errorf("the socket directory: the server mounts volume %q, dbsock %q; want one emptyDir for both", socketDir(server), socketDir(client))
	}
	if !strings.HasPrefix(result.Command[len(result.Command)-1], resultsDir+"/") || !slices.Contains(client.Args, result.Command[len(result.Command)-1]) {
		t.Errorf("the result container prints %v, dbsock writes to %v: want the file dbsock wrote", result.Command, client.Args)
	}
}

// TestMisspeltFieldIsRefused: the strict decoding of the tests above
// refuses a field the API does not have, where a lenient one would drop
// it and apply a Job of another kind (and a field given twice, where it would take the last).
func TestMisspeltFieldIsRefused(t *testing.T) {
	raw, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ field, misspelt string }{
		{"completionMode: Indexed", "completionMod: Indexed"},
		{"topologyKey:", "topologykey:"},
		{"fieldPath: spec.nodeName", "fieldPth: spec.nodeName"},
		{"runAsNonRoot: true", "runAsNonRoot: true\n          runAsNonRoot: true"},
	} {
		bad := bytes.Replace(raw, []byte(c.field), []byte(c.misspelt), 1)
		if bytes.Equal(bad, raw) {
			t.Fatalf("the manifest has no %q to misspell", c.field)
		}
		name, _, _ := strings.Cut(c.misspelt, ":")
		_, err := strictJob(t, bad)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s decoded strictly: error %v, want one naming the field %q", c.misspelt, err, name)
		}
		t.Logf("%s: %v", name, err)
		var lenient batchv1.Job
		if err := yaml.Unmarshal(bad, &lenient); err != nil {
			t.Errorf("%s: a lenient decoding failed too (%v): the strict one proves nothing", c.misspelt, err)
		}
	}
}

// TestCommandLine: the options reach the Job, flags after -- reach dbsock
// run, and bad input exits 2 with one line that says what to give.
func TestCommandLine(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-nodes", "5", "-dbsock-image", "registry.example/dbsock:v1", "--", "--n", "20000"}, &out, &errs); code != 0 {
		t.Fatalf("exit status %d: %s", code, errs.String())
	}
	job, err := strictJob(t, out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.InitContainers[1]
	if *job.Spec.Completions != 5 || *job.Spec.Parallelism != 5 || c.Image != "registry.example/dbsock:v1" || !slices.Equal(c.Args[len(c.Args)-2:], []string{"--n", "20000"}) {
		t.Errorf("completions %d, parallelism %d, image %s, args %v", *job.Spec.Completions, *job.Spec.Parallelism, c.Image, c.Args)
	}
	if !strings.Contains(out.String(), `# Written by "go run . -nodes 5 -dbsock-image registry.example/dbsock:v1 -- --n 20000"`) {
		t.Errorf("the header does not say how the manifest was written:\n%s", out.String())
	}
	for _, bad := range [][]string{{"-nodes", "0"}, {"-nodes", "x"}, {"-name", "Dbsock_Fleet"}, {"-dbsock-image", ""}, {"-deadline", "-1"}, {"-nope"}} {
		out.Reset()
		errs.Reset()
		code := run(bad, &out, &errs)
		if code != 2 || out.Len() != 0 || strings.Count(errs.String(), "\n") != 1 || !strings.HasPrefix(errs.String(), "dbsock-fleet: ") {
			t.Errorf("%v: exit status %d, stdout %q, stderr %q; want 2 and one line", bad, code, out.String(), errs.String())
		}
	}
}

func matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

func hasEnvFrom(c corev1.Container, name, fieldPath string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == fieldPath {
			return true
		}
	}
	return false
}

// socketDir is the volume c mounts at the socket's directory.
func socketDir(c corev1.Container) string {
	for _, m := range c.VolumeMounts {
		if m.MountPath == sockDir {
			return m.Name
		}
	}
	return ""
}

func isEmptyDir(p corev1.PodSpec, volume string) bool {
	for _, v := range p.Volumes {
		if v.Name == volume {
			return v.EmptyDir != nil
		}
	}
	return false
}
