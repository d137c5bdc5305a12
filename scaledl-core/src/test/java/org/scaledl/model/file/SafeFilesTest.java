package org.scaledl.model.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;

/** Writes replace only regular files, whole or not at all, and leave no temporary file; reads are bounded. */
class SafeFilesTest {
    @TempDir
    Path dir;

    private List<String> names() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aStreamedWriteReplacesTheFileWhenComplete() throws IOException {
        Path f = dir.resolve("out.csv");
        Files.writeString(f, "old");
        SafeFiles.write(f, out -> {
            for (int i = 0; i < 100_000; i++) {
                out.write(("row " + i + "\n").getBytes(StandardCharsets.UTF_8));
            }
        });
        assertEquals(100_000, Files.readAllLines(f).size());
        assertEquals(List.of("out.csv"), names());
    }

    @Test
    void aMissingFolderIsCreatedAsCheckWritableLetsItThrough() throws IOException {
        Path f = dir.resolve("a").resolve("b").resolve("out.csv");
        SafeFiles.checkWritable(f);
        SafeFiles.write(f, "x\n".getBytes(StandardCharsets.UTF_8));
        assertEquals("x", Files.readString(f).strip());
        Path file = dir.resolve("plain");
        Files.writeString(file, "a file, not a folder");
        assertThrows(UncheckedIOException.class, () -> SafeFiles.checkWritable(file.resolve("out.csv")));
        assertThrows(UncheckedIOException.class, () -> SafeFiles.write(file.resolve("out.csv"), new byte[1]));
        assertEquals("a file, not a folder", Files.readString(file));
    }

    /** A dangling link where the folder should be is refused before any work, not made through. */
    @Test
    @EnabledOnOs({OS.LINUX, OS.MAC})
    void aDanglingLinkIsNoFolderToMake() throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("dangling"), dir.resolve("nowhere"));
        UncheckedIOException e = assertThrows(UncheckedIOException.class,
                () -> SafeFiles.checkWritable(link.resolve("out.csv")));
        assertTrue(e.getMessage().contains("no such directory"), e.getMessage());
        UncheckedIOException w = assertThrows(UncheckedIOException.class,
                () -> SafeFiles.write(link.resolve("out.csv"), new byte[1]));
        assertTrue(w.getMessage().contains("exists and is not a folder"), w.getMessage());
        assertFalse(Files.exists(dir.resolve("nowhere")));
    }

    @Test
    void aWriteThatFailsHalfWayChangesNothingAndLeavesNothing() throws IOException {
        Path f = dir.resolve("out.csv");
        Files.writeString(f, "old");
        UncheckedIOException io = assertThrows(UncheckedIOException.class, () -> SafeFiles.write(f, out -> {
            out.write(new byte[1 << 20]);
            throw new IOException("No space left on device");
        }));
        assertTrue(io.getMessage().startsWith("cannot write " + f) && io.getMessage().contains("No space"),
                io.getMessage());
        InvalidInputException bad = assertThrows(InvalidInputException.class, () -> SafeFiles.write(f, out -> {
            out.write(new byte[1 << 20]);
            throw InvalidInputException.atLine("in.csv", 5000, "bad row");
        }));
        assertEquals(5000, bad.line());
        assertEquals("old", Files.readString(f));
        assertEquals(List.of("out.csv"), names(), "no .scaledl-*.tmp is left behind");
        // a folder that cannot be made (a file is in its place): nothing written, nothing left
        assertThrows(UncheckedIOException.class, () -> SafeFiles.write(f.resolve("x"), new byte[1]));
        assertEquals(List.of("out.csv"), names());
    }

    @Test
    @EnabledOnOs({OS.LINUX, OS.MAC})
    void whatIsNotARegularFileIsNeverReplaced() throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("link"), dir.resolve("target"));
        Path sub = Files.createDirectory(dir.resolve("sub"));
        Path fifo = dir.resolve("fifo");
        new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        for (Path p : List.of(Path.of("/dev/null"), link, sub, fifo)) {
            UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> SafeFiles.write(p, out ->
                    out.write(1)), p.toString());
            assertTrue(e.getMessage().startsWith("refusing to replace " + p.toAbsolutePath()), e.getMessage());
        }
        assertTrue(Files.isSymbolicLink(link) && Files.isDirectory(sub) && Files.exists(fifo));
        assertTrue(Files.notExists(dir.resolve("target")));
        assertEquals(List.of("fifo", "link", "sub"), names());
    }

    @Test
    @EnabledOnOs({OS.LINUX, OS.MAC})
    void aBoundedReadOfAnEndlessDeviceStopsAtTheLimit() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> SafeFiles.readBounded(Path.of("/dev/zero"), 1 << 16, "model file"));
        assertTrue(e.getMessage().contains("/dev/zero") && e.getMessage().contains("65536"), e.getMessage());
        assertArrayEquals(new byte[0], SafeFiles.readBounded(Path.of("/dev/null"), 10, "model file"));
    }
}
