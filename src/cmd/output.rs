//! Everything a command writes goes through here: stdout and stderr that cannot be written
//! (`> /dev/full`, `| head -1`) end the command with exit 2 instead of a panic, and output files
//! never overwrite an input and are replaced whole or not at all.

use super::failure::Failure;
use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// `println!` for commands: see [`print`].
macro_rules! outln {
    () => { $crate::cmd::output::print(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cmd::output::print(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` for commands: see [`print`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::cmd::output::print(format_args!($($arg)*)) };
}

pub(crate) use {out, outln};

/// Writes to stdout and flushes. If stdout is gone the command stops here with exit 2: quietly
/// when the reader closed the pipe (`| head -1` has what it wanted), else with the reason on
/// stderr (`taintcheck: stdout: No space left on device`).
pub fn print(text: fmt::Arguments) {
    if let Err(e) = try_print(text) {
        stdout_failed(&e);
    }
}

/// Writes to stdout and flushes, the error left to the caller (a command that must first clean
/// up, then call [`stdout_failed`]).
pub fn try_print(text: fmt::Arguments) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_fmt(text).and_then(|()| stdout.flush())
}

/// Ends the command for a stdout that could not be written, as [`print`] does.
pub fn stdout_failed(e: &io::Error) -> ! {
    if e.kind() != io::ErrorKind::BrokenPipe {
        eprint(&format!("taintcheck: stdout: {e}\n"));
    }
    std::process::exit(2);
}

/// Writes to stderr; a stderr that cannot be written is ignored (there is nowhere left to say
/// so), never a panic.
pub fn eprint(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// Writes `text` to `path` for option `option` (`--trace`, `--witness`): refused if `path` names
/// one of `inputs` (the same file under another name included), and written to a temporary file
/// beside it then renamed, so that a failed write leaves the old file as it was.
pub fn write_file(option: &str, path: &Path, text: &str, inputs: &[&Path]) -> Result<(), Failure> {
    let mut file = OutFile::create(option, path, inputs)?;
    file.write(text).map_err(|e| file.failed(e))?;
    file.finish()
}

/// An output file written piece by piece as the command goes (a long run's `--trace`), with
/// [`write_file`]'s guarantees: refused if it names an input, and written to a temporary file
/// beside it that [`OutFile::finish`] renames; dropped unfinished, it removes the temporary file
/// and leaves the old one as it was.
pub struct OutFile {
    path: PathBuf,
    /// The temporary file, until renamed; `None` for a device or a pipe, written in place.
    temporary: Option<PathBuf>,
    file: BufWriter<File>,
}

impl OutFile {
    /// Opens `path` for option `option`, refusing it if it names one of `inputs`.
    pub fn create(option: &str, path: &Path, inputs: &[&Path]) -> Result<OutFile, Failure> {
        if let Some(input) = inputs.iter().find(|input| same_file(path, input)) {
            return Err(Failure::usage(format!(
                "{option} {}: refusing to overwrite the input {}",
                path.display(),
                input.display()
            )));
        }
        let failed = |e: io::Error| Failure::usage(format!("{}: {e}", path.display()));
        // A device or a pipe (`--trace /dev/stdout`) cannot be replaced, only written.
        let temporary = if path.metadata().is_ok_and(|m| !m.is_file()) {
            None
        } else {
            Some(temporary_beside(path).map_err(failed)?)
        };
        let file = File::create(temporary.as_deref().unwrap_or(path)).map_err(failed)?;
        Ok(OutFile {
            path: path.to_path_buf(),
            temporary,
            file: BufWriter::new(file),
        })
    }

    /// Appends `text`.
    pub fn write(&mut self, text: &str) -> io::Result<()> {
        self.file.write_all(text.as_bytes())
    }

    /// The failure to report for `e`, an error writing this file.
    pub fn failed(&self, e: io::Error) -> Failure {
        Failure::usage(format!("{}: {e}", self.path.display()))
    }

    /// Writes out what is buffered and puts the file in its place.
    pub fn finish(mut self) -> Result<(), Failure> {
        let mut done = || -> io::Result<()> {
            self.file.flush()?;
            if let Some(temporary) = &self.temporary {
                self.file.get_ref().sync_all()?;
                std::fs::rename(temporary, &self.path)?;
            }
            Ok(())
        };
        let result = done();
        match result {
            Ok(()) => {
                self.temporary = None;
                Ok(())
            }
            Err(e) => Err(self.failed(e)),
        }
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if let Some(temporary) = &self.temporary {
            let _ = std::fs::remove_file(temporary);
        }
    }
}

/// Whether `a` and `b` are one file: the same canonical path, or the same device and inode (a
/// hard link). A path that does not exist yet is no input.
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ca), Ok(cb)) = (a.canonicalize(), b.canonicalize()) else {
        return false;
    };
    if ca == cb {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (a.metadata(), b.metadata()) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    false
}

/// A fresh name in `path`'s directory (a rename across file systems would fail).
fn temporary_beside(path: &Path) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut temporary = name.to_os_string();
    temporary.push(format!(".taintcheck-{}.tmp", std::process::id()));
    Ok(path.with_file_name(temporary))
}
