package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;

/** Bounded, line-numbered reads of tables: whole, in chunks, and of hostile paths. */
class CsvTableTest {
    @TempDir
    Path dir;

    @Test
    void linesBreakAsReadAllLinesDoes() throws IOException {
        Path f = dir.resolve("t.csv");
        String text = "a,b\r\n1,2\r3,4\n\n5,\"x,y\"\r\n";
        Files.writeString(f, text);
        assertEquals(Files.readAllLines(f), CsvTable.readLines(f));
        CsvTable t = CsvTable.read(f, "a", "b");
        assertEquals(3, t.size());
        assertEquals(List.of(2, 3, 5), List.of(t.line(0), t.line(1), t.line(2)));
        assertEquals("x,y", t.get(2, "b"));
    }

    @Test
    void chunksHoldTheRowsOfAWholeRead() throws IOException {
        Path f = dir.resolve("t.csv");
        StringBuilder sb = new StringBuilder("\uFEFFn,v\n");
        for (int i = 0; i < 1000; i++) {
            sb.append(i).append(',').append(i % 7 == 0 ? "" : "\"q" + i + "\"").append(i % 13 == 0 ? "\n\n" : "\n");
        }
        Files.writeString(f, sb.toString());
        CsvTable whole = CsvTable.read(f, "n");
        List<String> rows = new ArrayList<>();
        List<Integer> lines = new ArrayList<>();
        try (CsvTable.Reader in = CsvTable.open(f, "n", "v")) {
            assertEquals(List.of("n", "v"), in.columns());
            for (CsvTable c = in.next(64); c.size() > 0; c = in.next(64)) {
                assertTrue(c.size() <= 64);
                for (int r = 0; r < c.size(); r++) {
                    rows.add(c.get(r, "n") + "|" + c.get(r, "v"));
                    lines.add(c.line(r));
                }
            }
        }
        assertEquals(whole.size(), rows.size());
        for (int r = 0; r < whole.size(); r++) {
            assertEquals(whole.get(r, "n") + "|" + whole.get(r, "v"), rows.get(r));
            assertEquals(whole.line(r), lines.get(r));
        }
    }

    /**
     * An optional ranged field: empty where the column is absent or the field blank, its value where given, and the
     * ranged field's error, naming the file, line and column, where it is out of range or not a number.
     */
    /** A row that repeats an earlier one field for field is found with both lines; blank lines do not count. */
    @Test
    void aRepeatedRowIsFoundWithBothLines() {
        CsvTable t = CsvTable.parse("t.csv", List.of("a,b", "1,2", "", "1,3", "1, 2", "1,2"), "a");
        assertEquals(List.of(5, 2), java.util.Arrays.stream(t.repeatedRow().orElseThrow()).boxed().toList(),
                "fields are trimmed: ' 2' is '2'");
        assertTrue(CsvTable.parse("t.csv", List.of("a,b", "1,2", "1,3"), "a").repeatedRow().isEmpty());
    }

    @Test
    void optionalRangedFieldsAreEmptyWhereBlankAndCheckedWhereGiven() {
        CsvTable t = CsvTable.parse("t.csv", List.of("a,b", "1.5,", "7,x", "-2,3"), "a");
        assertEquals(1.5, t.optionalNumberInRange(0, "a", 0, 10).getAsDouble());
        assertTrue(t.optionalNumberInRange(0, "b", 0, 10).isEmpty());
        assertTrue(t.optionalNumberInRange(0, "c", 0, 10).isEmpty());
        assertTrue(t.optionalIntInRange(0, "b", 0, 10).isEmpty());
        assertEquals(7, t.optionalIntInRange(1, "a", 0, 10).getAsInt());
        InvalidInputException range = assertThrows(InvalidInputException.class,
                () -> t.optionalNumberInRange(2, "a", 0, 10));
        assertTrue(range.getMessage().startsWith("t.csv:4") && range.getMessage().contains("a must be a number in"),
                range.getMessage());
        InvalidInputException text = assertThrows(InvalidInputException.class,
                () -> t.optionalIntInRange(1, "b", 0, 10));
        assertTrue(text.getMessage().startsWith("t.csv:3") && text.getMessage().contains("b"), text.getMessage());
        InvalidInputException above = assertThrows(InvalidInputException.class,
                () -> t.optionalIntInRange(1, "a", 0, 5));
        assertTrue(above.getMessage().contains("a must be in 0..5"), above.getMessage());
    }

    @Test
    void textThatIsNotUtf8IsNamedByLineAndColumn() throws IOException {
        Path f = dir.resolve("latin1.csv");
        Files.write(f, "model,batch\nresnet,1\ncaf\u00e9,2\n".getBytes(StandardCharsets.ISO_8859_1));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> CsvTable.read(f, "model"));
        assertEquals(3, e.line(), e.getMessage());
        assertTrue(e.getMessage().contains("latin1.csv:3") && e.getMessage().contains("UTF-8")
                && e.getMessage().contains("0xe9") && e.getMessage().contains("column 4"), e.getMessage());
    }

    @Test
    @EnabledOnOs({OS.LINUX, OS.MAC})
    void anEndlessDeviceEndsInAnErrorNamingItAndTheLimit() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> CsvTable.read(Path.of("/dev/zero"), "graph"));
        assertTrue(e.getMessage().startsWith("/dev/zero:1: ") && e.getMessage().contains(
                Integer.toString(CsvTable.MAX_LINE_BYTES)), e.getMessage());
        InvalidInputException opened = assertThrows(InvalidInputException.class,
                () -> CsvTable.open(Path.of("/dev/zero"), "graph"));
        assertTrue(opened.getMessage().startsWith("/dev/zero:1: "), opened.getMessage());
    }

    @Test
    void aFileOverTheLimitIsRefusedBeforeItIsRead() throws IOException {
        Path f = dir.resolve("big.csv");
        try (var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
            // a sparse file: its size is over the limit, its blocks are not written
            ch.write(java.nio.ByteBuffer.wrap(new byte[] {'\n'}), CsvTable.MAX_BYTES);
        }
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> CsvTable.read(f, "a"));
        assertTrue(e.getMessage().contains("big.csv") && e.getMessage().contains(Long.toString(CsvTable.MAX_BYTES)),
                e.getMessage());
        assertThrows(InvalidInputException.class, () -> CsvTable.readLines(f));
    }

    @Test
    void aDirectoryOrAMissingFileIsNamed() {
        InvalidInputException d = assertThrows(InvalidInputException.class, () -> CsvTable.read(dir, "a"));
        assertTrue(d.getMessage().contains("directory"), d.getMessage());
        InvalidInputException m = assertThrows(InvalidInputException.class,
                () -> CsvTable.read(dir.resolve("none.csv"), "a"));
        assertTrue(m.getMessage().contains("none.csv") && m.getMessage().contains("no such file"), m.getMessage());
    }

    @Test
    void rangeAccessorsNameTheColumnAndRange() {
        CsvTable t = CsvTable.parse("t.csv", List.of("b,ms", "2147483647,4.9e-324", "3,5"), "b", "ms");
        InvalidInputException b = assertThrows(InvalidInputException.class, () -> t.intInRange(0, "b", 1, 1 << 20));
        assertTrue(b.getMessage().startsWith("t.csv:2: b must be in 1..1048576"), b.getMessage());
        InvalidInputException ms = assertThrows(InvalidInputException.class,
                () -> t.numberInRange(0, "ms", 1e-6, 1e9));
        assertTrue(ms.getMessage().startsWith("t.csv:2: ms must be a number in"), ms.getMessage());
        assertEquals(3, t.intInRange(1, "b", 1, 1 << 20));
        assertEquals(5.0, t.numberInRange(1, "ms", 1e-6, 1e9));
    }

    /** The comma-only fast path splits every line without quotes as the quote-aware reference does. */
    @net.jqwik.api.Property(tries = 300)
    void fastSplitMatchesTheQuoteAwareReference(
            @net.jqwik.api.ForAll @net.jqwik.api.constraints.CharRange(from = ' ', to = '~')
            @net.jqwik.api.constraints.Chars({',', ',', ' ', '\t'}) String line) {
        org.junit.jupiter.api.Assumptions.assumeTrue(line.indexOf('"') < 0);
        CsvTable t = CsvTable.parse("x.csv", List.of("a"));
        org.junit.jupiter.api.Assertions.assertArrayEquals(t.splitQuoted(line, 1), t.split(line, 1), line);
    }

    /** A double written as Java writes it, or in plain notation, reads back as that double. */
    @net.jqwik.api.Property(tries = 300)
    void decimalNumbersReadAsParseDoubleReadsThem(@net.jqwik.api.ForAll double x) {
        org.junit.jupiter.api.Assumptions.assumeTrue(Double.isFinite(x));
        for (String s : List.of(Double.toString(x), new java.math.BigDecimal(x).toPlainString(),
                String.format(java.util.Locale.ROOT, " %e ", x))) {
            assertEquals(Double.parseDouble(s.strip()), CsvTable.parseNumber(s), s);
        }
    }

    /** Java's other number syntax, which Double.parseDouble takes, is no table's number: refused at its cell. */
    @Test
    void javaNumberSyntaxIsNoTablesNumber() {
        for (String s : List.of("0x1p12", "5000d", "2f", "2.41D", "0xC80p0", "1_000", "", ".", "e5", "1e", "--1")) {
            assertThrows(NumberFormatException.class, () -> CsvTable.parseNumber(s), s);
        }
        for (String s : List.of("5.", ".5", "-0", "+1.5E+03", "1e-3", "NaN", "-Infinity")) {
            assertEquals(Double.parseDouble(s), CsvTable.parseNumber(s), s);
        }
        CsvTable t = CsvTable.parse("x.csv", List.of("a,b", "0x1p12,5000d"), "a", "b");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> t.positiveFinite(0, "a"));
        assertTrue(e.getMessage().contains("x.csv:2") && e.getMessage().contains("a is not a number: '0x1p12'"),
                e.getMessage());
        assertThrows(InvalidInputException.class, () -> t.positiveFinite(0, "b"));
    }
}
