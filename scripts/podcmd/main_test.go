package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func argsOf(t *testing.T, argv ...string) ([]string, error) {
	t.Helper()
	var out strings.Builder
	err := run(argv, &out)
	s := strings.TrimSuffix(out.String(), "\x00")
	if s == "" {
		return nil, err
	}
	return strings.Split(s, "\x00"), err
}

// The shipped manifests carry over to Docker: the sidecar is privileged
// with Bidirectional (rshared) propagation, the agent HostToContainer
// (rslave), and both keep their limits.
func TestShippedManifests(t *testing.T) {
	dir := filepath.Join("..", "..", "deploy", "kubernetes")
	sidecar, err := argsOf(t, "-f", filepath.Join(dir, "pod.yaml"), "-container", "memfs",
		"-volume", "memory=/srv/p1", "-secret", "memfs-db/url=postgres://x", "-image", "memfs:t")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]string{
		{"-e", "MEMFS_DB=postgres://x"}, {"--privileged"}, {"-v", "/srv/p1:/memory:rshared"},
		{"--memory", "268435456"}, {"--cpus", "1"},
		{"--entrypoint", "/bin/sh"},
		{"memfs:t", "-c", "mkdir -p /memory/stores && exec memfs mount --store agent-memory --uid 1000 --gid 1000 /memory/stores"},
	} {
		if !containsRun(sidecar, want) {
			t.Errorf("sidecar args %q lack %q", sidecar, want)
		}
	}
	agent, err := argsOf(t, "-f", filepath.Join(dir, "pod.yaml"), "-container", "agent",
		"-volume", "memory=/srv/p1", "-image", "busybox", "-no-command")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]string{{"-v", "/srv/p1:/memory:rslave"}, {"--user", "1000:1000"}, {"--security-opt", "no-new-privileges"}} {
		if !containsRun(agent, want) {
			t.Errorf("agent args %q lack %q", agent, want)
		}
	}
	if agent[len(agent)-1] != "busybox" {
		t.Errorf("with -no-command the image comes last: %q", agent)
	}
	probe, err := argsOf(t, "-f", filepath.Join(dir, "pod.yaml"), "-container", "memfs", "-probe")
	if err != nil || probe[0] != "/bin/sh" {
		t.Errorf("probe %q, %v", probe, err)
	}
	node, err := argsOf(t, "-f", filepath.Join(dir, "daemonset.yaml"), "-container", "memfs-node",
		"-volume", "memfs=/srv/node", "-secret", "memfs-db/url=postgres://x")
	if err != nil {
		t.Fatal(err)
	}
	if !containsRun(node, []string{"-v", "/srv/node:/var/lib/memfs:rshared"}) || !containsRun(node, []string{"--entrypoint", "/bin/sh"}) {
		t.Errorf("DaemonSet args %q", node)
	}
	if _, err := argsOf(t, "-f", filepath.Join(dir, "secret.yaml"), "-container", "memfs"); err == nil ||
		!strings.Contains(err.Error(), "no container named") {
		t.Errorf("a file without the container: %v", err)
	}
}

func containsRun(args, want []string) bool {
	for i := range args {
		if slices.Equal(args[i:min(i+len(want), len(args))], want) {
			return true
		}
	}
	return false
}

// A field the test cannot run is an error, so a manifest cannot drift away
// from what scripts/container-test checks.
func TestRefused(t *testing.T) {
	for name, c := range map[string]struct{ yaml, want string }{
		"unknown field": {`
kind: Pod
spec:
  containers:
    - name: a
      image: x
      livenessProbe: {exec: {command: [true]}}
`, "livenessProbe"},
		"Bidirectional unprivileged": {`
kind: Pod
spec:
  containers:
    - name: a
      image: x
      volumeMounts: [{name: m, mountPath: /m, mountPropagation: Bidirectional}]
  volumes: [{name: m, hostPath: {path: /m}}]
`, "only in a privileged container"},
		"emptyDir without a directory": {`
kind: Pod
spec:
  containers:
    - name: a
      image: x
      volumeMounts: [{name: m, mountPath: /m}]
  volumes: [{name: m, emptyDir: {}}]
`, "-volume m=DIR"},
		"bad memory": {`
kind: Pod
spec:
  containers:
    - name: a
      image: x
      resources: {limits: {memory: lots}}
`, "memory quantity"},
		"other kind": {"kind: Deployment\n", "knows Pod, DaemonSet and Secret"},
	} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "m.yaml")
			if err := os.WriteFile(f, []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := argsOf(t, "-f", f, "-container", "a", "-volume", "x=/y")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// $(VAR) in the command is the container's environment, as in Kubernetes.
func TestExpand(t *testing.T) {
	f := filepath.Join(t.TempDir(), "m.yaml")
	os.WriteFile(f, []byte(`
kind: Pod
spec:
  containers:
    - name: a
      image: x
      env: [{name: STORE, value: notes}]
      args: [mount, --store, $(STORE), $(OTHER)]
`), 0o644)
	args, err := argsOf(t, "-f", f, "-container", "a")
	if err != nil {
		t.Fatal(err)
	}
	if !containsRun(args, []string{"x", "mount", "--store", "notes", "$(OTHER)"}) {
		t.Errorf("args %q", args)
	}
}
