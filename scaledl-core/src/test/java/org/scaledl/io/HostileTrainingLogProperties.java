package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import org.scaledl.InvalidInputException;

/**
 * A training log with up to four of its lines changed (an argument's value replaced by a hostile one: negative, zero,
 * fractional, past the integers' range, a word, empty, a terminal escape, Java's number syntax; a line taken out,
 * repeated, or cut in the middle) is either read into runs whose jobs are positive, or refused with an
 * {@link InvalidInputException} that names the log and shows no control character; nothing else is thrown. The logs
 * are the bundled Megatron-LM and NeMo ones.
 */
class HostileTrainingLogProperties {
    private static final Path DIR = Path.of("src/test/resources/logs");
    private static final List<String> LOGS = List.of("megatron-llama3-8b.log", "nemo-llama3-8b.log");
    private static final List<String> VALUES = List.of("-1", "0", "2.5", "4294967297", "99999999999999999999",
            "abc", "", "None", "True", "1e308", "NaN", "\u001b[2Jx", "x".repeat(2000), "0x1p1", "2.41d");

    /** One change: which line (an index modulo the lines), what (a value index, or past them a line operation). */
    record Change(int line, int what) {
    }

    @Provide
    Arbitrary<List<Change>> changes() {
        return Arbitraries.integers().between(0, 100_000).flatMap(l -> Arbitraries.integers().between(0,
                VALUES.size() + 2).map(w -> new Change(l, w))).list().ofMinSize(1).ofMaxSize(4);
    }

    @Provide
    Arbitrary<String> logs() {
        return Arbitraries.of(LOGS);
    }

    @Property(tries = 300)
    void hostileLinesAreReadOrRefusedNamingTheLog(@ForAll("logs") String name,
            @ForAll("changes") List<Change> changes) throws IOException {
        List<String> lines = new ArrayList<>(Files.readAllLines(DIR.resolve(name), StandardCharsets.UTF_8));
        StringBuilder what = new StringBuilder(name);
        for (Change c : changes) {
            int i = c.line() % lines.size();
            String line = lines.get(i);
            if (c.what() < VALUES.size()) {
                // the value after the argument's dots, or after a '|'-separated field's colon, or the line's last word
                String value = VALUES.get(c.what());
                int cut = Math.max(line.lastIndexOf(". "), line.lastIndexOf(": "));
                String changed = cut >= 0 ? line.substring(0, cut + 2) + value
                        : line.contains(" ") ? line.substring(0, line.lastIndexOf(' ') + 1) + value : value;
                lines.set(i, changed);
                what.append(" | line ").append(i + 1).append(" := ").append(shortly(changed));
            } else if (c.what() == VALUES.size()) {
                lines.remove(i);
                what.append(" | line ").append(i + 1).append(" removed");
            } else if (c.what() == VALUES.size() + 1) {
                lines.add(i, line);
                what.append(" | line ").append(i + 1).append(" repeated");
            } else {
                lines.set(i, line.substring(0, line.length() / 2));
                what.append(" | line ").append(i + 1).append(" cut");
            }
            if (lines.isEmpty()) {
                lines.add("");
            }
        }
        Path dir = Files.createTempDirectory("hostile-log");
        Path log = dir.resolve("hostile.log");
        try {
            Files.write(log, lines, StandardCharsets.UTF_8);
            List<TrainingLogs.Run> runs = TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP);
            Statistics.collect("read");
            assertTrue(!runs.isEmpty(), what.toString());
            for (TrainingLogs.Run r : runs) {
                TrainingLogs.Job j = r.job();
                assertTrue(j.seq() > 0 && j.microBatch() > 0 && j.microBatches() > 0 && j.dataParallel() > 0
                        && j.tensor() > 0 && j.pipeline() > 0 && j.gpus() > 0, what + ": " + j);
            }
        } catch (InvalidInputException e) {
            Statistics.collect("refused");
            String m = e.getMessage();
            assertTrue(m.contains("hostile.log"), what + ": " + m);
            assertTrue(m.chars().noneMatch(ch -> ch < 0x20 && ch != '\n' || ch == 0x7f), what + ": " + m);
            assertTrue(m.length() <= 2000, what + ": " + m.length() + " characters");
        } catch (RuntimeException | Error e) {
            throw new AssertionError(what + ": " + e, e);
        } finally {
            Files.deleteIfExists(log);
            Files.deleteIfExists(dir);
        }
        Statistics.coverage(c -> {
            c.check("read").percentage(p -> p > 5);
            c.check("refused").percentage(p -> p > 5);
        });
    }

    private static String shortly(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "…" : s;
    }
}
