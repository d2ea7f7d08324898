package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/scripts/internal/stats"
	"github.com/memfs/memfs/versions"
)

// visibilityTimeout is how long a probe waits for a save to show in the
// other mount before it counts the sample as timed out.
const visibilityTimeout = 5 * time.Second

// pollInterval is the pause between two looks at the second mount: short
// next to the 50 ms target, long enough to leave the daemons the CPUs.
const pollInterval = 200 * time.Microsecond

type visibilityResult struct {
	Samples  int     `json:"samples"`
	Timeouts int     `json:"timeouts"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
	SaveP50  float64 `json:"save_p50_ms"` // open+write+close in mount A
	Met      bool    `json:"met"`
	Method   string  `json:"method"`
	Daemon   string  `json:"mount_b_daemon"`
}

// measureVisibility mounts one store twice — mount A in this process, mount
// B in a separate daemon process — and has a probe process save in A and
// watch B until the new content shows.
func measureVisibility(ctx context.Context, cfg *config, work string, rep *report) error {
	dbPath := filepath.Join(work, "visibility.db")
	db, sessA, err := openSession(ctx, dbPath, false, "visibility")
	if err != nil {
		return err
	}
	defer db.Close()
	sessB, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: sessA.Resources[0].StoreID, Access: versions.ReadWrite}})
	if err != nil {
		return fmt.Errorf("create the second session: %w", err)
	}
	mntA, mntB := filepath.Join(work, "vis-a"), filepath.Join(work, "vis-b")
	for _, d := range []string{mntA, mntB} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	unmountA, err := mountMemfs(mntA, db, sessA)
	if err != nil {
		return err
	}
	defer unmountA()
	d, daemonKind, err := startMemfsDaemon(ctx, cfg, dbPath, sessB.ID, mntB)
	if err != nil {
		return err
	}
	defer stopDaemon(d, mntB)

	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self, "visibility",
		"--a", filepath.Join(mntA, sessA.Resources[0].Slug),
		"--b", filepath.Join(mntB, sessB.Resources[0].Slug),
		"--samples", strconv.Itoa(cfg.visSamples))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("visibility probe: %w", err)
	}
	var res struct{ Visible, Save []time.Duration }
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return fmt.Errorf("visibility probe printed %q: %w", out.String(), err)
	}
	v := &visibilityResult{Samples: len(res.Visible), Daemon: daemonKind,
		Method: "probe process: open(O_TRUNC)+write+close in mount A (served by the bench), then open+read+close in mount B (a second daemon process) every 0.2 ms until the new bytes show; latency from close() returning"}
	for _, l := range res.Visible {
		if l >= visibilityTimeout {
			v.Timeouts++
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	v.P50MS = ms(stats.Percentile(res.Visible, 50))
	v.P99MS = ms(stats.Percentile(res.Visible, 99))
	v.MaxMS = ms(stats.Percentile(res.Visible, 100))
	v.SaveP50 = ms(stats.Percentile(res.Save, 50))
	v.Met = v.Samples > 0 && v.P99MS <= visibilityP99TargetMS
	rep.Visibility = v
	return nil
}

// stopDaemon stops d and makes sure nothing stays mounted on mnt, even when
// the daemon had to be killed.
func stopDaemon(d *daemon, mnt string) error {
	err := d.stop()
	if uerr := unix.Unmount(mnt, unix.MNT_DETACH); uerr != nil && !errors.Is(uerr, unix.EINVAL) {
		err = errors.Join(err, fmt.Errorf("unmount %s: %w", mnt, uerr))
	}
	return err
}

// visibilityMain is the "visibility" helper mode: the probe.
func visibilityMain(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("visibility", flag.ContinueOnError)
	a := fl.String("a", "", "directory in mount A")
	b := fl.String("b", "", "the same directory in mount B")
	samples := fl.Int("samples", 200, "saves to time")
	if err := fl.Parse(args); err != nil {
		return err
	}
	pathA, pathB := filepath.Join(*a, "probe.md"), filepath.Join(*b, "probe.md")
	buf := make([]byte, 4096)
	var visible, save []time.Duration
	// Sample 0 creates the file; its latency is a lookup, not a save.
	for i := 0; i <= *samples; i++ {
		content := []byte(fmt.Sprintf("save %d at %d\n", i, time.Now().UnixNano()))
		flags := unix.O_TRUNC
		if i == 0 {
			flags = unix.O_CREAT
		}
		start := time.Now()
		if err := writeFile(pathA, flags, content); err != nil {
			return err
		}
		saved := time.Now()
		for {
			got, err := readFile(pathB, buf)
			if err == nil && bytes.Equal(got, content) {
				break
			}
			if time.Since(saved) >= visibilityTimeout {
				break
			}
			time.Sleep(pollInterval)
		}
		if i > 0 {
			visible = append(visible, time.Since(saved))
			save = append(save, saved.Sub(start))
		}
	}
	return json.NewEncoder(stdout).Encode(struct{ Visible, Save []time.Duration }{visible, save})
}
