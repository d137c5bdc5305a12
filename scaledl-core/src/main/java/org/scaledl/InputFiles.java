package org.scaledl;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Opens the files the readers read. A regular file or a device opens as {@link Files#newInputStream} opens it (a
 * device or a shell's {@code /dev/stdin} read without asking for a position, which they have none of); a
 * pipe (a named one, or a shell's process substitution) waits for its writer, at most {@value #WRITER_WAIT_MS} ms:
 * opening a pipe nobody writes would wait forever, so it is refused naming the file instead. Every reader caps what
 * it reads itself.
 *
 * <pre>{@code
 * try (InputStream in = InputFiles.open(path)) { ... }
 * }</pre>
 */
public final class InputFiles {
    /** How long opening a pipe waits for its writer, ms. */
    public static final long WRITER_WAIT_MS = 3000;

    private InputFiles() {
    }

    /**
     * Opens a file to read.
     *
     * @throws InvalidInputException naming the file where it is a pipe no writer opened in {@link #WRITER_WAIT_MS}
     * @throws IOException           as {@link Files#newInputStream} does
     */
    public static InputStream open(Path file) throws IOException {
        if (!pipe(file)) {
            return stream(file);
        }
        CompletableFuture<InputStream> opening = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                opening.complete(stream(file));
            } catch (IOException | RuntimeException e) {
                opening.completeExceptionally(e);
            }
        }, "scaledl-open-pipe");
        t.setDaemon(true);
        t.start();
        try {
            return opening.get(WRITER_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            abandon(opening, file);
            throw InvalidInputException.inSource(file.toString(), "a pipe no writer opened in "
                    + WRITER_WAIT_MS / 1000 + " s: reading it would wait forever (start its writer first, or give a "
                    + "file)");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw (RuntimeException) e.getCause();
        } catch (InterruptedException e) {
            abandon(opening, file);
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a writer of " + file);
        }
    }

    /**
     * Lets go of a pipe whose opening was given up: its reader's stream is closed once it opens, and the opening
     * thread is released by opening the pipe once for writing and closing it at once (in a thread of its own: it
     * waits for the reader's open), so no thread stays blocked on it.
     */
    private static void abandon(CompletableFuture<InputStream> opening, Path file) {
        opening.thenAccept(in -> {
            try {
                in.close();
            } catch (IOException ignored) {
                // nothing to do: the reader is gone
            }
        });
        Thread release = new Thread(() -> {
            try (var out = Files.newOutputStream(file, java.nio.file.StandardOpenOption.WRITE)) {
                // opened: the reader's open returns, and reads the end of the pipe
            } catch (IOException | RuntimeException ignored) {
                // gone or unwritable: the reader's open fails or waits as it would have
            }
        }, "scaledl-release-pipe");
        release.setDaemon(true);
        release.start();
    }

    /**
     * A regular file's stream as {@link Files#newInputStream} opens it; anything else (a pipe, a shell's
     * {@code /dev/stdin}, a device) the same, read without asking for a position, which a pipe has none of: the
     * JDK's streams ask for one to say what is {@code available}, to read all bytes and to skip ("Illegal seek"), so
     * those are answered by reading.
     */
    private static InputStream stream(Path file) throws IOException {
        InputStream in = Files.newInputStream(file);
        if (Files.isRegularFile(file)) {
            return in;
        }
        return new java.io.FilterInputStream(in) {
            @Override
            public int available() {
                return 0;
            }

            @Override
            public long skip(long n) throws IOException {
                if (n <= 0) {
                    return 0;
                }
                byte[] b = new byte[(int) Math.max(1, Math.min(1 << 13, n))];
                long left = n;
                while (left > 0) {
                    int r = read(b, 0, (int) Math.min(b.length, left));
                    if (r < 0) {
                        break;
                    }
                    left -= r;
                }
                return n - Math.max(0, left);
            }
        };
    }

    /** Whether the path (links followed) is a pipe: a FIFO's Unix file type; false where that cannot be told. */
    private static boolean pipe(Path file) {
        try {
            return Files.getAttribute(file, "unix:mode") instanceof Integer m && (m & S_IFMT) == S_IFIFO;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;   // missing or unreadable (opening says so), or no Unix attributes to tell
        }
    }

    /** The file-type bits of a Unix mode. */
    private static final int S_IFMT = 0170000;
    /** A FIFO's file type. */
    private static final int S_IFIFO = 0010000;
}
