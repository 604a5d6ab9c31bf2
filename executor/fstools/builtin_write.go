package fstools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/internal/words"
)

const writeFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "file path relative to the root folder"},
    "content": {"type": "string", "description": "the whole new content of the file"},
    "create_dirs": {"type": "boolean", "description": "create missing parent folders (default false)"}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

// writeFile is write_file. It resolves the path like the readers (so a
// link inside the root is written through to its target), refuses
// anything but a regular file or a new name, writes a temporary file in the
// same folder and renames it into place: a reader never sees half a file,
// and a hard link to the old file is left unchanged.
func (s *sandbox) writeFile(ctx context.Context, args map[string]any) (string, error) {
	var a struct {
		Path       string `json:"path"`
		Content    string `json:"content"`
		CreateDirs bool   `json:"create_dirs"`
	}
	if err := executor.DecodeArgs(args, &a); err != nil {
		return "", err
	}
	if int64(len(a.Content)) > s.readCap {
		return "", refusef(executor.ErrInvalidArgs, "content is %d bytes; write_file accepts at most %d", len(a.Content), s.readCap)
	}
	r, err := s.open()
	if err != nil {
		return "", err
	}
	rel, err := s.path(ctx, r, a.Path)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", refusef(executor.ErrNotRegular, "%q is the root folder itself", a.Path)
	}
	created := false
	fi, err := r.Lstat(rel)
	switch {
	case err == nil:
		if err := regular(a.Path, fi); err != nil {
			return "", err
		}
	case errors.Is(err, fs.ErrNotExist):
		created = true
	default:
		return "", fsError(a.Path, err)
	}
	dir := path.Dir(rel)
	if a.CreateDirs && dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return "", fsError(a.Path, err)
		}
	} else if dfi, err := r.Stat(dir); err != nil {
		return "", refusef(fs.ErrNotExist, "the folder of %q does not exist; create it first or pass create_dirs=true", a.Path)
	} else if !dfi.IsDir() {
		return "", refusef(fs.ErrNotExist, "the parent of %q is %s, not a folder", a.Path, words.FileKind(dfi.Mode()))
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, "."+path.Base(rel)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) // O_EXCL: never through an existing name or link
	if err != nil {
		return "", fsError(a.Path, err)
	}
	var werr error
	if !created {
		werr = f.Chmod(fi.Mode().Perm()) // keep the replaced file's permissions; on the open file, so no name can be swapped in
	}
	if werr == nil {
		_, werr = f.WriteString(a.Content)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = r.Rename(tmp, rel)
	}
	if werr != nil {
		_ = r.Remove(tmp)
		return "", fsError(a.Path, werr)
	}
	verb := "replaced"
	if created {
		verb = "created"
	}
	return fmt.Sprintf("%s %s (%d bytes)", verb, a.Path, len(a.Content)), nil
}
