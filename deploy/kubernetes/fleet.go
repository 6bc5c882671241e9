// Command kubernetes writes the Kubernetes manifest of a once-per-node
// dbsock run: an Indexed Job of one pod per node (required pod
// anti-affinity on kubernetes.io/hostname), each pod a Redis server and
// dbsock measuring it over TCP on 127.0.0.1 and over its Unix socket in a
// directory both containers share, under the node's name.
//
// It has a module of its own so that dbsock's carries none of
// Kubernetes' dependencies.
package main

import (
	"bytes"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

//go:generate go run . -o dbsock-fleet.yaml

// Options are what the manifest is made of.
type Options struct {
	Name        string   // the Job's name, and its pods' label
	Nodes       int      // how many nodes: completions and parallelism
	DbsockImage string   // an image whose entrypoint is dbsock
	RedisImage  string   // the official redis image, or one that starts the same way
	Deadline    int64    // seconds the Job may run, pods waiting for a node included
	RunFlags    []string // more flags for dbsock run
}

// Defaults are the committed manifest's options.
var Defaults = Options{
	Name:        "dbsock-fleet",
	Nodes:       3,
	DbsockImage: "dbsock:latest",
	RedisImage:  "redis:7.4",
	Deadline:    3600,
}

// Where the pod's volumes are mounted, and the socket and result files.
const (
	sockDir    = "/sock"
	resultsDir = "/results"
	tmpDir     = "/tmp"
	socket     = sockDir + "/redis.sock"
	resultFile = resultsDir + "/result.json"
	redisPort  = "6379"
)

// Job is the Indexed Job of o: completions = parallelism = o.Nodes, one
// pod per node.
func Job(o Options) *batchv1.Job {
	labels := map[string]string{"app.kubernetes.io/name": "dbsock", "app.kubernetes.io/instance": o.Name}
	indexed := batchv1.IndexedCompletion
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:        &indexed,
			Completions:           ptr(int32(o.Nodes)),
			Parallelism:           ptr(int32(o.Nodes)),
			BackoffLimit:          ptr(int32(0)),
			ActiveDeadlineSeconds: ptr(o.Deadline),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod(o, labels),
			},
		},
	}
}

// pod is each node's pod: the Redis server as a sidecar (an init
// container that keeps running, ready once its socket answers), dbsock as
// the init container after it, and the result container, whose log is
// dbsock's result file and nothing else, so that kubectl logs gathers it
// from a finished pod (kubectl cp needs a running one).
func pod(o Options, labels map[string]string) corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
				TopologyKey:   "kubernetes.io/hostname",
			}},
		}},
		SecurityContext: &corev1.PodSecurityContext{
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		InitContainers: []corev1.Container{redis(o), dbsock(o)},
		Containers: []corev1.Container{{
			Name:            "result",
			Image:           o.RedisImage,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"cat", resultFile},
			VolumeMounts:    []corev1.VolumeMount{{Name: "results", MountPath: resultsDir, ReadOnly: true}},
			SecurityContext: locked(65534),
		}},
		Volumes: []corev1.Volume{emptyDir("sock"), emptyDir("results"), emptyDir("tmp")},
	}
}

// redis is the server: listening on 127.0.0.1 of the pod's network
// namespace and on a socket in the directory dbsock's container shares;
// a sidecar, ended when the pod's last container has.
func redis(o Options) corev1.Container {
	return corev1.Container{
		Name:            "redis",
		Image:           o.RedisImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		RestartPolicy:   ptr(corev1.ContainerRestartPolicyAlways),
		Args: []string{"--port", redisPort, "--bind", "127.0.0.1", "--unixsocket", socket, "--unixsocketperm", "777",
			"--save", "", "--appendonly", "no"},
		StartupProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"redis-cli", "-s", socket, "ping"}}},
			PeriodSeconds:    1,
			FailureThreshold: 60,
		},
		VolumeMounts:    []corev1.VolumeMount{{Name: "sock", MountPath: sockDir}},
		SecurityContext: locked(999),
	}
}

// dbsock measures the server under the node's name (the downward API's
// spec.nodeName) into the results volume.
func dbsock(o Options) corev1.Container {
	args := []string{"run", "redis", "--provider", "external",
		"--redis-addr", "127.0.0.1:" + redisPort, "--redis-socket", socket,
		"--host", "$(NODE_NAME)", "--out", resultFile}
	return corev1.Container{
		Name:            "dbsock",
		Image:           o.DbsockImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            append(args, o.RunFlags...),
		Env: []corev1.EnvVar{
			{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "TMPDIR", Value: tmpDir},
			{Name: "HOME", Value: tmpDir},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "sock", MountPath: sockDir},
			{Name: "results", MountPath: resultsDir},
			{Name: "tmp", MountPath: tmpDir},
		},
		SecurityContext: locked(65534),
	}
}

// locked runs a container as uid with no capability, no privilege to
// gain, and a read-only root filesystem.
func locked(uid int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr(uid),
		RunAsGroup:               ptr(uid),
		RunAsNonRoot:             ptr(true),
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func ptr[T any](v T) *T { return &v }

// Manifest is the YAML of o's Job, under a comment that says how it was
// written and how it is used.
func Manifest(o Options, command string) ([]byte, error) {
	body, err := yaml.Marshal(Job(o))
	if err != nil {
		return nil, fmt.Errorf("write the Job %s as YAML: %w", o.Name, err)
	}
	var b bytes.Buffer
	header := fmt.Sprintf(`dbsock on each of %[1]d nodes, once: an Indexed Job of %[1]d pods, each on a
node of its own, each measuring a Redis server (%[2]s) over TCP on
127.0.0.1 and over its Unix socket, under the node's name.

Written by "%[3]s" in deploy/kubernetes (go generate: the defaults) from
its fleet.go: change that, not this file.
Needs Kubernetes 1.29 or later (the Redis server is a sidecar container),
%[1]d schedulable nodes, and %[4]s, an image whose entrypoint is dbsock.

  kubectl apply -f dbsock-fleet.yaml && kubectl wait --for=condition=complete --timeout=1h job/%[5]s
  mkdir -p fleet && for p in $(kubectl get pods -l job-name=%[5]s -o name); do kubectl logs "$p" -c result > "fleet/${p#pod/}.json"; done
  dbsock report fleet/ --out fleet.md
`, o.Nodes, o.RedisImage, command, o.DbsockImage, o.Name)
	for _, line := range strings.Split(strings.TrimSuffix(header, "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	b.Write(body)
	return b.Bytes(), nil
}
