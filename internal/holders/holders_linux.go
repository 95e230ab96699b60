package holders

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Locks returns the locks other processes hold or wait for on files, from
// /proc/locks. ok is false when this system does not say.
func Locks(files ...string) (locks []Lock, ok bool) {
	keys := map[string]string{}
	for _, f := range files {
		var st unix.Stat_t
		if err := unix.Stat(f, &st); err != nil {
			continue
		}
		dev := uint64(st.Dev) // uint32 on some architectures
		keys[fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), st.Ino)] = f
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil, false
	}
	if len(keys) == 0 {
		return nil, true
	}
	self := selfFilter()
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l, key, ok := parseLock(sc.Text())
		if !ok {
			continue
		}
		file, asked := keys[key]
		if !asked || (l.PID > 0 && self.skip(l.PID)) {
			continue
		}
		l.File = file
		locks = append(locks, l)
	}
	return locks, true
}

// parseLock reads one line of /proc/locks:
//
//	1: POSIX  ADVISORY  READ 25530 fe:00:10519050 1073741826 1073742335
//	2: -> FLOCK  ADVISORY  WRITE 4242 08:01:123 0 EOF
func parseLock(line string) (Lock, string, bool) {
	f := strings.Fields(line)
	if len(f) > 1 && f[1] == "->" {
		f = append(f[:1], f[2:]...)
	}
	if len(f) < 8 {
		return Lock{}, "", false
	}
	pid, err := strconv.Atoi(f[4])
	if err != nil {
		return Lock{}, "", false
	}
	start, err := strconv.ParseInt(f[6], 10, 64)
	if err != nil {
		return Lock{}, "", false
	}
	end := int64(-1)
	if f[7] != "EOF" {
		if end, err = strconv.ParseInt(f[7], 10, 64); err != nil {
			return Lock{}, "", false
		}
	}
	return Lock{PID: pid, Write: f[3] == "WRITE", Start: start, End: end}, f[5], true
}

// Open returns the other processes that have open a file match accepts
// (given its absolute path), one entry per process, from /proc/<pid>/fd.
// Processes of other users are not seen. ok is false when this system does
// not say.
func Open(match func(path string) bool) (procs []Process, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := selfFilter()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || self.skip(pid) {
			continue
		}
		fdDir := filepath.Join("/proc", e.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err == nil && match(target) {
				procs = append(procs, Process{PID: pid, Command: Command(pid), File: target})
				break
			}
		}
	}
	return procs, true
}

// Command is a process's command name, "" when it cannot be read.
func Command(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// filter leaves out this process and processes running the same program.
type filter struct {
	pid  int
	comm string
}

func selfFilter() filter { return filter{pid: os.Getpid(), comm: Command(os.Getpid())} }

func (f filter) skip(pid int) bool {
	return pid == f.pid || (f.comm != "" && Command(pid) == f.comm)
}
