// Command podcmd turns a container of a Kubernetes manifest into the
// arguments of `docker run`, so that scripts/container-test runs the
// containers of deploy/kubernetes with the command, environment, mounts,
// mount propagation, security context and limits the manifests give them.
// A field it cannot carry over to Docker is an error, not skipped: what the
// manifests say is what the test runs.
//
//	podcmd -f deploy/kubernetes/pod.yaml -container memfs \
//	    -volume memory=/srv/pod1 -secret memfs-db/url=postgres://… \
//	    -image memfs:abc1234 -- --name pod1-memfs
//
// prints, NUL-separated: the arguments after -- , the container's options,
// the image and its command (read them with mapfile -d ”). -probe prints
// the startupProbe's exec command instead, -no-command stops after the
// image (the caller gives its own command), -privileged-as-caps runs a
// privileged container on a host where Docker's --privileged cannot start.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The subset of the Kubernetes objects the manifests use; decoding with
// known fields only makes any other field an error.
type object struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   metadata `yaml:"metadata"`
	Spec       yaml.Node
	// A Secret's data.
	Type       string            `yaml:"type"`
	StringData map[string]string `yaml:"stringData"`
}

type metadata struct {
	Name   string            `yaml:"name"`
	Labels map[string]string `yaml:"labels"`
}

type daemonSetSpec struct {
	Selector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"selector"`
	Template struct {
		Metadata metadata `yaml:"metadata"`
		Spec     podSpec  `yaml:"spec"`
	} `yaml:"template"`
}

type podSpec struct {
	TerminationGracePeriodSeconds *int        `yaml:"terminationGracePeriodSeconds"`
	InitContainers                []container `yaml:"initContainers"`
	Containers                    []container `yaml:"containers"`
	Volumes                       []volume    `yaml:"volumes"`
}

type container struct {
	Name            string          `yaml:"name"`
	Image           string          `yaml:"image"`
	ImagePullPolicy string          `yaml:"imagePullPolicy"`
	RestartPolicy   string          `yaml:"restartPolicy"`
	Command         []string        `yaml:"command"`
	Args            []string        `yaml:"args"`
	Env             []envVar        `yaml:"env"`
	SecurityContext securityContext `yaml:"securityContext"`
	VolumeMounts    []volumeMount   `yaml:"volumeMounts"`
	StartupProbe    *probe          `yaml:"startupProbe"`
	Resources       struct {
		Requests map[string]string `yaml:"requests"` // scheduling only: nothing to run
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
}

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type securityContext struct {
	Privileged               *bool `yaml:"privileged"`
	RunAsUser                *int  `yaml:"runAsUser"`
	RunAsGroup               *int  `yaml:"runAsGroup"`
	AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
	Capabilities             *struct {
		Add []string `yaml:"add"`
	} `yaml:"capabilities"`
}

type volumeMount struct {
	Name             string `yaml:"name"`
	MountPath        string `yaml:"mountPath"`
	ReadOnly         bool   `yaml:"readOnly"`
	MountPropagation string `yaml:"mountPropagation"`
}

type probe struct {
	Exec struct {
		Command []string `yaml:"command"`
	} `yaml:"exec"`
	PeriodSeconds    int `yaml:"periodSeconds"`
	FailureThreshold int `yaml:"failureThreshold"`
}

type volume struct {
	Name     string    `yaml:"name"`
	EmptyDir *struct{} `yaml:"emptyDir"`
	HostPath *struct {
		Path string `yaml:"path"`
		Type string `yaml:"type"`
	} `yaml:"hostPath"`
}

// strictDecode decodes v's YAML into out, refusing fields out does not have.
func strictDecode(v any, out any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	return d.Decode(out)
}

// manifest is the file's objects: its pod specs and its Secrets.
type manifest struct {
	pods    []podSpec
	secrets map[string]string // name/key → value
}

func load(name string) (*manifest, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &manifest{secrets: map[string]string{}}
	d := yaml.NewDecoder(f)
	d.KnownFields(true)
	for {
		var o object
		if err := d.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		switch o.Kind {
		case "Pod":
			var s podSpec
			if err := strictDecode(&o.Spec, &s); err != nil {
				return nil, fmt.Errorf("%s: Pod %s: %w", name, o.Metadata.Name, err)
			}
			m.pods = append(m.pods, s)
		case "DaemonSet":
			var s daemonSetSpec
			if err := strictDecode(&o.Spec, &s); err != nil {
				return nil, fmt.Errorf("%s: DaemonSet %s: %w", name, o.Metadata.Name, err)
			}
			m.pods = append(m.pods, s.Template.Spec)
		case "Secret":
			for k, v := range o.StringData {
				m.secrets[o.Metadata.Name+"/"+k] = v
			}
		default:
			return nil, fmt.Errorf("%s: kind %q: podcmd knows Pod, DaemonSet and Secret", name, o.Kind)
		}
	}
	return m, nil
}

// find returns the container called name and its pod spec.
func (m *manifest) find(name string) (*container, *podSpec, error) {
	for i := range m.pods {
		p := &m.pods[i]
		for _, cs := range [][]container{p.InitContainers, p.Containers} {
			for j := range cs {
				if cs[j].Name == name {
					return &cs[j], p, nil
				}
			}
		}
	}
	return nil, nil, fmt.Errorf("no container named %q", name)
}

// propagation is Docker's bind propagation for Kubernetes' mountPropagation.
var propagation = map[string]string{
	"":                "rprivate",
	"None":            "rprivate",
	"HostToContainer": "rslave",
	"Bidirectional":   "rshared",
}

var kubeVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

type options struct {
	volumes map[string]string // volume name → host directory (for emptyDir; overrides hostPath)
	secrets map[string]string // name/key → value (overrides the file's Secrets)
	image   string
	// capsOnly runs a privileged container as every capability this
	// process may hand on, unconfined, with /dev/fuse: where the host's
	// bounding set lacks one (a host that is a container itself), Docker's
	// --privileged fails to start any container.
	capsOnly bool
}

// capNames are the capabilities by number (linux/capability.h).
var capNames = []string{"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID",
	"SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
	"IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN",
	"SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE",
	"AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND",
	"AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE"}

// privilegedByCaps is --privileged as far as this host allows it.
func privilegedByCaps() ([]string, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	var bnd uint64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%x", &bnd); err != nil {
				return nil, fmt.Errorf("/proc/self/status: CapBnd %q: %w", v, err)
			}
		}
	}
	args := []string{"--cap-add", "ALL"}
	for i, name := range capNames {
		if bnd&(1<<i) == 0 {
			args = append(args, "--cap-drop", name)
		}
	}
	return append(args, "--device", "/dev/fuse", "--security-opt", "seccomp=unconfined",
		"--security-opt", "apparmor=unconfined", "--security-opt", "systempaths=unconfined"), nil
}

// dockerArgs is `docker run`'s options, image and command for c.
func dockerArgs(c *container, p *podSpec, o options, withCommand bool) ([]string, error) {
	var args []string
	env := map[string]string{}
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			ref := e.ValueFrom.SecretKeyRef
			if ref == nil {
				return nil, fmt.Errorf("env %s: only valueFrom.secretKeyRef is supported", e.Name)
			}
			var ok bool
			if v, ok = o.secrets[ref.Name+"/"+ref.Key]; !ok {
				return nil, fmt.Errorf("env %s: no value for secret %s/%s (give -secret %s/%s=VALUE)", e.Name, ref.Name, ref.Key, ref.Name, ref.Key)
			}
		}
		env[e.Name] = v
		args = append(args, "-e", e.Name+"="+v)
	}
	sc := c.SecurityContext
	if sc.Privileged != nil && *sc.Privileged {
		if o.capsOnly {
			p, err := privilegedByCaps()
			if err != nil {
				return nil, err
			}
			args = append(args, p...)
		} else {
			args = append(args, "--privileged")
		}
	}
	if sc.Capabilities != nil {
		for _, cap := range sc.Capabilities.Add {
			args = append(args, "--cap-add", cap)
		}
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		args = append(args, "--security-opt", "no-new-privileges")
	}
	if sc.RunAsUser != nil {
		u := fmt.Sprint(*sc.RunAsUser)
		if sc.RunAsGroup != nil {
			u += fmt.Sprintf(":%d", *sc.RunAsGroup)
		}
		args = append(args, "--user", u)
	} else if sc.RunAsGroup != nil {
		return nil, errors.New("securityContext: runAsGroup without runAsUser")
	}
	for _, vm := range c.VolumeMounts {
		var vol *volume
		for i := range p.Volumes {
			if p.Volumes[i].Name == vm.Name {
				vol = &p.Volumes[i]
			}
		}
		if vol == nil {
			return nil, fmt.Errorf("volumeMount %s: no such volume", vm.Name)
		}
		src, ok := o.volumes[vm.Name]
		if !ok {
			if vol.HostPath == nil {
				return nil, fmt.Errorf("volume %s: an emptyDir needs a host directory (give -volume %s=DIR)", vm.Name, vm.Name)
			}
			src = vol.HostPath.Path
		}
		prop, ok := propagation[vm.MountPropagation]
		if !ok {
			return nil, fmt.Errorf("volumeMount %s: mountPropagation %q is not None, HostToContainer or Bidirectional", vm.Name, vm.MountPropagation)
		}
		if vm.MountPropagation == "Bidirectional" && (sc.Privileged == nil || !*sc.Privileged) {
			return nil, fmt.Errorf("volumeMount %s: Kubernetes allows Bidirectional propagation only in a privileged container", vm.Name)
		}
		spec := src + ":" + vm.MountPath + ":" + prop
		if vm.ReadOnly {
			spec += ",ro"
		}
		args = append(args, "-v", spec)
	}
	if p.TerminationGracePeriodSeconds != nil {
		args = append(args, "--stop-timeout", fmt.Sprint(*p.TerminationGracePeriodSeconds))
	}
	if mem, ok := c.Resources.Limits["memory"]; ok {
		b, err := bytesOf(mem)
		if err != nil {
			return nil, fmt.Errorf("resources.limits.memory: %w", err)
		}
		args = append(args, "--memory", fmt.Sprint(b))
	}
	if cpu, ok := c.Resources.Limits["cpu"]; ok {
		n, err := cpusOf(cpu)
		if err != nil {
			return nil, fmt.Errorf("resources.limits.cpu: %w", err)
		}
		args = append(args, "--cpus", n)
	}
	for k := range c.Resources.Limits {
		if k != "memory" && k != "cpu" {
			return nil, fmt.Errorf("resources.limits.%s: podcmd carries over cpu and memory only", k)
		}
	}
	expand := func(s string) string {
		return kubeVar.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m // Kubernetes leaves an unknown $(VAR) as it is
		})
	}
	var tail []string
	if withCommand {
		if len(c.Command) > 0 {
			args = append(args, "--entrypoint", expand(c.Command[0]))
			for _, s := range c.Command[1:] {
				tail = append(tail, expand(s))
			}
		}
		for _, s := range c.Args {
			tail = append(tail, expand(s))
		}
	}
	image := c.Image
	if o.image != "" {
		image = o.image
	}
	args = append(args, image)
	return append(args, tail...), nil
}

// bytesOf reads a Kubernetes memory quantity (256Mi, 1Gi, 500M, 1000).
func bytesOf(q string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}
	for _, u := range units {
		if n, ok := strings.CutSuffix(q, u.suffix); ok {
			var v int64
			if _, err := fmt.Sscanf(n, "%d", &v); err != nil || fmt.Sprint(v) != n {
				return 0, fmt.Errorf("%q is not a whole number of %s", q, u.suffix)
			}
			return v * u.mult, nil
		}
	}
	var v int64
	if _, err := fmt.Sscanf(q, "%d", &v); err != nil || fmt.Sprint(v) != q {
		return 0, fmt.Errorf("%q is not a memory quantity (such as 256Mi)", q)
	}
	return v, nil
}

// cpusOf reads a Kubernetes CPU quantity ("2", "500m") as Docker's --cpus.
func cpusOf(q string) (string, error) {
	if n, ok := strings.CutSuffix(q, "m"); ok {
		var v int
		if _, err := fmt.Sscanf(n, "%d", &v); err != nil || fmt.Sprint(v) != n {
			return "", fmt.Errorf("%q is not a CPU quantity (such as 500m)", q)
		}
		return fmt.Sprintf("%.3f", float64(v)/1000), nil
	}
	var v float64
	if _, err := fmt.Sscanf(q, "%g", &v); err != nil || v <= 0 {
		return "", fmt.Errorf("%q is not a CPU quantity (such as 2)", q)
	}
	return q, nil
}

type pairs map[string]string

func (p pairs) String() string { return fmt.Sprint(map[string]string(p)) }
func (p pairs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not NAME=VALUE", s)
	}
	p[k] = v
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "podcmd:", err)
		os.Exit(1)
	}
}

func run(argv []string, out io.Writer) error {
	fs := flag.NewFlagSet("podcmd", flag.ContinueOnError)
	file := fs.String("f", "", "the manifest `FILE`")
	name := fs.String("container", "", "the container's `NAME`")
	o := options{volumes: pairs{}, secrets: pairs{}}
	fs.Var(pairs(o.volumes), "volume", "`NAME=DIR`: the host directory of volume NAME (repeat)")
	fs.Var(pairs(o.secrets), "secret", "`SECRET/KEY=VALUE`: a secret's value (repeat; default: the file's Secrets)")
	fs.StringVar(&o.image, "image", "", "run `IMAGE` instead of the manifest's")
	probeOnly := fs.Bool("probe", false, "print the startupProbe's exec command")
	noCommand := fs.Bool("no-command", false, "stop after the image: the caller gives the command")
	fs.BoolVar(&o.capsOnly, "privileged-as-caps", false, "run privileged: true as all the capabilities this host allows, unconfined, with /dev/fuse, instead of --privileged")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	if *file == "" || *name == "" {
		return errors.New("-f FILE and -container NAME are needed")
	}
	m, err := load(*file)
	if err != nil {
		return err
	}
	for k, v := range m.secrets {
		if _, ok := o.secrets[k]; !ok {
			o.secrets[k] = v
		}
	}
	c, p, err := m.find(*name)
	if err != nil {
		return fmt.Errorf("%s: %w", *file, err)
	}
	var args []string
	if *probeOnly {
		if c.StartupProbe == nil || len(c.StartupProbe.Exec.Command) == 0 {
			return fmt.Errorf("%s: container %s has no startupProbe with an exec command", *file, *name)
		}
		args = c.StartupProbe.Exec.Command
	} else {
		if args, err = dockerArgs(c, p, o, !*noCommand); err != nil {
			return fmt.Errorf("%s: container %s: %w", *file, *name, err)
		}
		args = append(fs.Args(), args...)
	}
	for _, a := range args {
		if _, err := io.WriteString(out, a+"\x00"); err != nil {
			return err
		}
	}
	return nil
}
