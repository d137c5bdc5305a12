package org.scaledl.model.file;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.scaledl.InvalidInputException;

/**
 * Reading and writing files the way a tool run as root in a container must: a write never replaces anything but a
 * regular file (not a device node such as {@code /dev/null}, a pipe, a directory or a symbolic link) and never leaves
 * a half-written file or a temporary one behind; a read never takes more than a stated number of bytes, whatever the
 * path names ({@code /dev/zero} included).
 *
 * <pre>{@code
 * SafeFiles.write(Path.of("model.sdl"), bytes);
 * byte[] b = SafeFiles.readBounded(Path.of("model.sdl"), 64 << 20, "model file");
 * }</pre>
 */
public final class SafeFiles {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SafeFiles.class);

    private SafeFiles() {
    }

    /**
     * Writes bytes atomically: a temporary file beside the target, then a rename over it; a missing folder is
     * created first. The file is readable by the group and others as the umask allows (0644 under the usual 022).
     *
     * @throws UncheckedIOException naming the file if it cannot be written or names something other than a regular
     *         file; the temporary file is removed and nothing at the path is changed
     */
    public static void write(Path file, byte[] bytes) {
        write(file, out -> out.write(bytes));
    }

    /** What writes a file's content to a stream (for {@link #write(Path, Content)}). */
    @FunctionalInterface
    public interface Content {
        /**
         * Writes the content.
         *
         * @param out the temporary file's stream (buffered; not to be closed)
         */
        void writeTo(OutputStream out) throws IOException;
    }

    /**
     * Writes a file atomically from a stream, for content too large to hold in memory: the content goes to a
     * temporary file beside the target, which is renamed over it only when the content is complete. As
     * {@link #write(Path, byte[])}.
     *
     * @throws UncheckedIOException naming the file if it cannot be written (also when {@code content} throws an
     *         {@link IOException}) or names something other than a regular file; the temporary file is removed and
     *         nothing at the path is changed, also when {@code content} throws anything else
     */
    public static void write(Path file, Content content) {
        Path target = file.toAbsolutePath();
        refuseNonRegular(target);
        Path parent = target.getParent();
        Path tmp = null;
        try {
            if (parent != null && !Files.isDirectory(parent)) {
                // a missing folder is created (checkWritable let it through): a long job never fails at its end;
                // said, so that a mistyped folder is seen
                Files.createDirectories(parent);
                LOG.info("created the folder {} for {}", parent, target.getFileName());
            }
            tmp = Files.createTempFile(parent, ".scaledl-", ".tmp");
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16)) {
                content.writeTo(out);
            }
            applyUmask(parent, tmp);
            refuseNonRegular(target);
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            tmp = null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + describe(e, tmp, parent), e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the write already failed; its error is the one to report
                }
            }
        }
    }

    /**
     * Refuses a path that exists and is not a regular file (checked without following links).
     *
     * @throws UncheckedIOException naming the path and what it is
     */
    public static void refuseNonRegular(Path file) {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        } catch (java.nio.file.FileSystemException e) {
            // a file where a folder of the path belongs (ENOTDIR): named, once
            Path parent = file.toAbsolutePath().getParent();
            while (parent != null && !Files.isRegularFile(parent, LinkOption.NOFOLLOW_LINKS)) {
                parent = parent.getParent();
            }
            throw new UncheckedIOException("cannot write " + file + ": " + (parent != null
                    ? parent + " is a file, not a folder" : describe(e)), e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + describe(e), e);
        }
        if (!a.isRegularFile()) {
            String what = a.isSymbolicLink() ? "a symbolic link" : a.isDirectory() ? "a directory"
                    : "not a regular file (a device, a pipe or a socket)";
            throw new UncheckedIOException("refusing to replace " + file + ": it is " + what
                    + "; give the path of a regular file", new IOException(what));
        }
    }

    /**
     * Reads a whole file of at most {@code maxBytes} bytes. Special files are read through a bounded stream, so a
     * path such as {@code /dev/zero} ends in an error instead of filling memory.
     *
     * @param what what the file is, for the message ({@code "model file"})
     * @throws InvalidInputException naming the file when it is missing, unreadable, a directory or too large
     */
    public static byte[] readBounded(Path file, long maxBytes, String what) {
        if (Files.isDirectory(file)) {
            throw InvalidInputException.inSource(file.toString(), "cannot read " + what + ": it is a directory");
        }
        try {
            if (Files.isRegularFile(file) && Files.size(file) > maxBytes) {
                throw InvalidInputException.inSource(file.toString(), what + " of " + Files.size(file)
                        + " bytes is larger than the limit of " + maxBytes);
            }
            try (InputStream in = org.scaledl.InputFiles.open(file)) {
                byte[] b = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
                if (b.length > maxBytes) {
                    throw InvalidInputException.inSource(file.toString(), what + " is larger than the limit of "
                            + maxBytes + " bytes");
                }
                return b;
            }
        } catch (IOException e) {
            throw InvalidInputException.unreadable(file, "cannot read " + what, e);
        }
    }

    private static void applyUmask(Path parent, Path tmp) throws IOException {
        try {
            Set<PosixFilePermission> perms = PosixFilePermissions.fromString("rw-r--r--");
            Path probe = parent.resolve(".scaledl-umask-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
            Files.createFile(probe);
            try {
                perms.retainAll(Files.getPosixFilePermissions(probe));
            } finally {
                Files.deleteIfExists(probe);
            }
            perms.add(PosixFilePermission.OWNER_READ);
            perms.add(PosixFilePermission.OWNER_WRITE);
            Files.setPosixFilePermissions(tmp, perms);
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: the platform's defaults apply
        }
    }

    /**
     * Refuses, before any work, an output path that cannot be written: not a regular file ({@link #refuseNonRegular}),
     * or whose folder neither exists nor can be created (its nearest existing ancestor is not a folder this process
     * can write; the writers create the missing folders).
     *
     * @throws UncheckedIOException naming the path and what is wrong
     */
    public static void checkWritable(Path file) {
        Path target = file.toAbsolutePath();
        refuseNonRegular(target);
        Path parent = target.getParent();
        // (a link counts as there: a dangling one is no folder to make)
        while (parent != null && !Files.exists(parent, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            parent = parent.getParent();
        }
        if (parent == null || !Files.isDirectory(parent)) {
            throw new UncheckedIOException("cannot write " + file + ": no such directory: " + parent,
                    new NoSuchFileException(String.valueOf(parent)));
        }
        if (!Files.isWritable(parent)) {
            throw new UncheckedIOException("cannot write " + file + ": permission denied in " + parent,
                    new java.nio.file.AccessDeniedException(parent.toString()));
        }
    }

    /** An error's description naming the folder, never the temporary file it happened on. */
    private static String describe(IOException e, Path tmp, Path parent) {
        String d = describe(e);
        if (tmp != null && d.contains(tmp.toString())) {
            return d.replace(tmp.toString(), "a new file in " + parent);
        }
        if (e instanceof java.nio.file.AccessDeniedException && tmp == null) {
            return "permission denied in " + parent;
        }
        if (tmp == null && e instanceof java.nio.file.FileSystemException f && f.getFile() != null
                && f.getFile().matches(".*/\\.scaledl-[0-9]+\\.tmp")) {
            // the temporary file could not be created: its generated name means nothing to the user
            return "cannot create a file in " + parent + " (" + (e instanceof NoSuchFileException
                    ? "no such file or directory" : f.getReason() == null ? e.getClass().getSimpleName()
                    : f.getReason()) + ")";
        }
        return d;
    }

    private static String describe(IOException e) {
        if (e instanceof NoSuchFileException n) {
            return "no such file or directory: " + n.getFile();
        }
        if (e instanceof java.nio.file.AccessDeniedException a) {
            return "permission denied: " + a.getFile();
        }
        if (e instanceof java.nio.file.FileAlreadyExistsException x) {
            // a folder to make where something else is (a file, a dangling link)
            return x.getFile() + " exists and is not a folder";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
