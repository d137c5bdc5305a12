package org.scaledl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Opening what the readers read: a file as it is, a pipe with its writer, a pipe without one refused. */
class InputFilesTest {
    private static Path fifo(Path dir) throws Exception {
        Path f = dir.resolve("p.fifo");
        assumeTrue(new ProcessBuilder("mkfifo", f.toString()).start().waitFor() == 0 && Files.exists(f), "mkfifo");
        return f;
    }

    private static boolean opening() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("scaledl-open-pipe")
                || t.getName().equals("scaledl-release-pipe"));
    }

    @Test
    void aFileAndAPipeWithAWriterAreRead(@TempDir Path dir) throws Exception {
        Path file = Files.write(dir.resolve("f.txt"), new byte[] {1, 2, 3});
        try (InputStream in = InputFiles.open(file)) {
            assertArrayEquals(new byte[] {1, 2, 3}, in.readAllBytes());
        }
        Path p = fifo(dir);
        Thread writer = new Thread(() -> {
            try (OutputStream out = Files.newOutputStream(p)) {
                out.write(new byte[] {4, 5});
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        writer.setDaemon(true);
        writer.start();
        try (InputStream in = InputFiles.open(p)) {
            assertArrayEquals(new byte[] {4, 5}, in.readAllBytes());
        }
    }

    /** A pipe nobody writes is refused naming it, and no thread stays blocked on it. */
    @Test
    void aPipeNobodyWritesIsRefusedAndLetGo(@TempDir Path dir) throws Exception {
        Path p = fifo(dir);
        long t0 = System.nanoTime();
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> InputFiles.open(p));
        assertTrue(e.getMessage().contains("p.fifo") && e.getMessage().contains("no writer"), e.getMessage());
        assertTrue(System.nanoTime() - t0 >= InputFiles.WRITER_WAIT_MS * 1_000_000L);
        for (int i = 0; i < 100 && opening(); i++) {
            Thread.sleep(50);
        }
        assertTrue(!opening(), "a thread still blocked on the pipe");
    }
}
