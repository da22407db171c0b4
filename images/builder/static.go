package builder

import (
	"bytes"
	"debug/elf"
	"fmt"
)

// goArch maps an ELF machine to the OCI platform architecture.
var goArch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
	elf.EM_386:     "386",
	elf.EM_ARM:     "arm",
	elf.EM_PPC64:   "ppc64le",
	elf.EM_S390:    "s390x",
	elf.EM_RISCV:   "riscv64",
}

// StaticArch checks that binary is a statically linked Linux ELF executable
// (no program interpreter, no shared libraries: it runs on an empty base) and
// returns its architecture.
func StaticArch(binary []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(binary))
	if err != nil {
		return "", fmt.Errorf("not an ELF executable: %w", err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", fmt.Errorf("ELF type %s is not an executable", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("dynamically linked (has a program interpreter); build with CGO_ENABLED=0")
		}
	}
	libs, err := f.ImportedLibraries()
	if err == nil && len(libs) > 0 {
		return "", fmt.Errorf("needs shared libraries %v; build with CGO_ENABLED=0", libs)
	}
	arch, ok := goArch[f.Machine]
	if !ok {
		return "", fmt.Errorf("unsupported ELF machine %s", f.Machine)
	}
	return arch, nil
}
