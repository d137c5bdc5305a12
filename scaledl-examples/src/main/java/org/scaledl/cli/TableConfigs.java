package org.scaledl.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The transformer configurations a table being written names, kept inside its folder: a candidate or job runs table
 * may only name files inside its own folder ({@code predict --candidates} and {@code fit --calibrate --runs} refuse
 * others), so a configuration outside the folder of {@code NAME.csv} is copied beside it, byte for byte, as
 * {@code NAME.configs/FOLDER/config.json} (the model keeps its name: a configuration is named after its folder; two
 * configurations of one folder name get {@code FOLDER-2}, ...; a file already there with other bytes is never
 * replaced, the next name is taken), and the table names the copy. One instance per table written; each
 * configuration is copied once.
 */
final class TableConfigs {
    private final Path dir;
    private final Path copies;
    private final Map<Path, Path> copied = new LinkedHashMap<>();
    private final Set<Path> taken = new HashSet<>();

    /** For the table {@code table} (not yet written). */
    TableConfigs(Path table) {
        Path t = table.toAbsolutePath().normalize();
        this.dir = t.getParent();
        String name = t.getFileName().toString();
        this.copies = dir.resolve((name.toLowerCase(Locale.ROOT).endsWith(".csv") ? name.substring(0,
                name.length() - 4) : name) + ".configs");
    }

    /**
     * The cell that names a configuration ({@code config.json}, or the model folder that holds it) in the table: its
     * path relative to the table's folder, with forward slashes; a copy's where it lies outside that folder.
     *
     * @throws UncheckedIOException where the copy cannot be written
     */
    String cell(Path config) {
        Path t = org.scaledl.transformer.HuggingFaceConfig.configurationFile(config).toAbsolutePath().normalize();
        if (!inside(t)) {
            Path source = t;
            t = copied.computeIfAbsent(real(t), k -> copy(source));
        }
        return dir.relativize(t).toString().replace('\\', '/');
    }

    /** The copies written so far, in the order they were made. */
    List<Path> copies() {
        return new ArrayList<>(copied.values());
    }

    private boolean inside(Path file) {
        try {
            return file.startsWith(dir) && file.toRealPath().startsWith(dir.toRealPath());
        } catch (IOException e) {
            return false;
        }
    }

    /** One file however it is reached (links resolved where it can be read). */
    private static Path real(Path file) {
        try {
            return file.toRealPath();
        } catch (IOException e) {
            return file;
        }
    }

    /**
     * Whether {@code c} holds something other than {@code source}'s bytes: a file there already (another table's
     * configuration, one a row names itself) is never replaced; a copy of the same bytes (the same plan written
     * again) is kept as it is.
     */
    private static boolean occupied(Path source, Path c) {
        if (!Files.exists(c, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try {
            return !Files.isRegularFile(c, java.nio.file.LinkOption.NOFOLLOW_LINKS) || Files.mismatch(source, c) != -1;
        } catch (IOException e) {
            return true;
        }
    }

    private Path copy(Path source) {
        Path parent = source.getParent() == null ? null : source.getParent().getFileName();
        String folder = parent == null ? "model" : parent.toString();
        Path c = copies.resolve(folder).resolve(source.getFileName().toString());
        for (int k = 2; taken.contains(c) || occupied(source, c); k++) {
            c = copies.resolve(folder + "-" + k).resolve(source.getFileName().toString());
        }
        taken.add(c);
        try {
            Files.createDirectories(c.getParent());
            if (!Files.exists(c)) {
                Files.copy(source, c);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy " + source + " beside the table as " + c + ": "
                    + e.getMessage(), e);
        }
        return c;
    }
}
