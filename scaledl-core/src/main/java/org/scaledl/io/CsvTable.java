package org.scaledl.io;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.scaledl.InvalidInputException;

/**
 * A header-first comma-separated file with line-numbered accessors, read whole ({@link #read}) or in chunks of rows
 * ({@link #open}). Fields may be double-quoted (RFC 4180, without embedded line breaks). Every error is an
 * {@link InvalidInputException} naming the file and the 1-based line.
 *
 * <p>Reads are bounded whatever the path names ({@code /dev/zero}, a pipe that never ends): a whole read takes at
 * most {@link #MAX_BYTES}, a chunked one {@link #MAX_STREAM_BYTES}, and no line may be longer than
 * {@link #MAX_LINE_BYTES}. Text must be UTF-8; a byte sequence that is not is reported at its line and column.
 *
 * <pre>{@code
 * CsvTable t = CsvTable.read(path, "gpu", "bytes", "time_ms");
 * for (int r = 0; r < t.size(); r++) {
 *     double ms = t.positiveFinite(r, "time_ms");
 * }
 * try (CsvTable.Reader in = CsvTable.open(path, "graph")) {
 *     for (CsvTable chunk = in.next(4096); chunk.size() > 0; chunk = in.next(4096)) { ... }
 * }
 * }</pre>
 */
public final class CsvTable {
    /** The largest file {@link #read} and {@link #readLines} take, bytes (64 MiB). */
    public static final long MAX_BYTES = 64L << 20;
    /** The largest file {@link #open} streams, bytes (1 GiB: some ten million candidate rows). */
    public static final long MAX_STREAM_BYTES = 1L << 30;
    /** The longest line, bytes (1 MiB). */
    public static final int MAX_LINE_BYTES = 1 << 20;

    private final String source;
    private final Map<String, Integer> columns;
    private final List<String> header;
    private final List<String[]> rows = new ArrayList<>();
    private final List<Integer> lineNumbers = new ArrayList<>();
    /** The column names a reader asked for ({@link #has}, {@link #get}, {@link #opt}), present or not. */
    private final java.util.Set<String> asked = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private CsvTable(String source) {
        this(source, new ArrayList<>(), new HashMap<>());
    }

    /** A table sharing another's header (a chunk of a streamed file). */
    private CsvTable(String source, List<String> header, Map<String, Integer> columns) {
        this.source = source;
        this.header = header;
        this.columns = columns;
    }

    /**
     * Reads a file of at most {@link #MAX_BYTES} and checks that the required columns exist.
     *
     * @throws InvalidInputException naming the file (and line) when it cannot be read, is larger than the limit,
     *         is not UTF-8, or is not a table with those columns
     */
    public static CsvTable read(Path path, String... required) {
        try (Reader in = new Reader(path, MAX_BYTES, required)) {
            return in.next(Integer.MAX_VALUE);
        }
    }

    /**
     * Opens a file of at most {@link #MAX_STREAM_BYTES} to read in chunks of rows ({@link Reader#next}); the header
     * is read and the required columns checked here.
     *
     * @throws InvalidInputException as {@link #read}
     */
    public static Reader open(Path path, String... required) {
        return new Reader(path, MAX_STREAM_BYTES, required);
    }

    /**
     * The lines of a text file of at most {@link #MAX_BYTES} (line breaks {@code \n}, {@code \r\n} or {@code \r}, as
     * {@link java.io.BufferedReader#readLine}).
     *
     * @throws InvalidInputException naming the file (and line) when it cannot be read, is larger than the limit or
     *         is not UTF-8
     */
    public static List<String> readLines(Path path) {
        List<String> out = new ArrayList<>();
        try (Lines in = new Lines(path, MAX_BYTES)) {
            for (String line = in.next(); line != null; line = in.next()) {
                out.add(line);
            }
        }
        return out;
    }

    /** Parses lines (the first non-blank one is the header); {@code source} names them in errors. */
    public static CsvTable parse(String source, List<String> lines, String... required) {
        CsvTable t = new CsvTable(source);
        int first = 0;
        while (first < lines.size() && lines.get(first).isBlank()) {
            first++;
        }
        if (first == lines.size()) {
            throw InvalidInputException.inSource(source, "empty file: no header line");
        }
        t.header(lines.get(first), first + 1, required);
        for (int i = first + 1; i < lines.size(); i++) {
            t.add(lines.get(i), i + 1);
        }
        return t;
    }

    private void header(String line, int lineNo, String... required) {
        String[] fields = split(line, lineNo);
        for (int i = 0; i < fields.length; i++) {
            String h = fields[i].trim();
            if (i == 0 && h.startsWith("\uFEFF")) {
                h = h.substring(1);
            }
            header.add(h);
            if (columns.put(h, i) != null) {
                throw InvalidInputException.atLine(source, lineNo, "duplicate column '" + h + "'");
            }
        }
        for (String r : required) {
            if (!columns.containsKey(r)) {
                java.util.Optional<String> other = otherSeparator(java.util.Arrays.asList(fields));
                if (other.isPresent()) {
                    throw InvalidInputException.atLine(source, lineNo, other.get() + " (this one needs a column '" + r
                            + "')");
                }
                throw InvalidInputException.atLine(source, lineNo, "missing column '" + r + "' (have "
                        + String.join(", ", fields) + ")");
            }
        }
    }

    /**
     * Why a header read as one column holds the others: the table is separated by {@code ;}, tabs or {@code |}, not
     * commas (a spreadsheet's export in a locale whose decimal separator is the comma): what to tell the user, or empty.
     */
    public static java.util.Optional<String> otherSeparator(List<String> header) {
        if (header.size() == 1) {
            for (String sep : new String[] {";", "\t", "|"}) {
                if (header.get(0).contains(sep)) {
                    String said = sep.equals("\t") ? "tabs" : "'" + sep + "'";
                    return java.util.Optional.of("the header is one column holding " + said + ": the table is "
                            + "separated by " + said + ", and scaledl reads comma-separated tables");
                }
            }
        }
        return java.util.Optional.empty();
    }

    /** Adds a data line (a blank one is skipped). */
    private void add(String line, int lineNo) {
        if (line.isBlank()) {
            return;
        }
        String[] f = split(line, lineNo);
        if (f.length != header.size()) {
            throw InvalidInputException.atLine(source, lineNo, "has " + f.length + " fields, the header has "
                    + header.size());
        }
        rows.add(f);
        lineNumbers.add(lineNo);
    }

    /**
     * A table read in chunks of rows: each chunk is a {@link CsvTable} with the file's header and its own rows, whose
     * {@link CsvTable#line} are lines of the file. Not thread-safe.
     */
    public static final class Reader implements AutoCloseable {
        private final Lines lines;
        private final CsvTable head;

        private Reader(Path path, long maxBytes, String... required) {
            lines = new Lines(path, maxBytes);
            try {
                String line = lines.next();
                while (line != null && line.isBlank()) {
                    line = lines.next();
                }
                if (line == null) {
                    throw InvalidInputException.inSource(path.toString(), "empty file: no header line");
                }
                head = new CsvTable(path.toString());
                head.header(line, lines.lineNumber(), required);
            } catch (RuntimeException e) {
                lines.close();
                throw e;
            }
        }

        /** The column names, in file order. */
        public List<String> columns() {
            return head.columns();
        }

        /**
         * The next rows, at most {@code maxRows} of them; a table without rows at the end of the file.
         *
         * @throws InvalidInputException naming the file and line of a malformed line
         */
        public CsvTable next(int maxRows) {
            CsvTable chunk = new CsvTable(head.source, head.header, head.columns);
            while (chunk.size() < maxRows) {
                String line = lines.next();
                if (line == null) {
                    break;
                }
                chunk.add(line, lines.lineNumber());
            }
            return chunk;
        }

        @Override
        public void close() {
            lines.close();
        }
    }

    /**
     * The lines of a file, bounded in total and per line, decoded as UTF-8 line by line (a malformed sequence is
     * reported at its line and column).
     */
    private static final class Lines implements AutoCloseable {
        private final Path path;
        private final long maxBytes;
        private final InputStream in;
        private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        private final byte[] buf = new byte[1 << 16];
        private int pos;
        private int end;
        private long total;
        private int lineNo;
        private byte[] line = new byte[256];
        private boolean skipNewline;

        Lines(Path path, long maxBytes) {
            this.path = path;
            this.maxBytes = maxBytes;
            try {
                if (Files.isDirectory(path)) {
                    throw InvalidInputException.inSource(path.toString(), "cannot read: it is a directory");
                }
                if (Files.isRegularFile(path) && Files.size(path) > maxBytes) {
                    throw tooLarge(Files.size(path) + " bytes, more than");
                }
                in = org.scaledl.InputFiles.open(path);
            } catch (IOException e) {
                throw InvalidInputException.unreadable(path, "cannot read", e);
            }
        }

        private InvalidInputException tooLarge(String what) {
            return InvalidInputException.inSource(path.toString(), "file of " + what + " the limit of " + maxBytes
                    + " bytes for a table (" + (maxBytes >> 20) + " MiB)");
        }

        /** The 1-based line number of the line {@link #next} returned last. */
        int lineNumber() {
            return lineNo;
        }

        /** The next line without its line break, or {@code null} at the end. */
        String next() {
            int len = 0;
            boolean any = false;
            while (true) {
                if (pos == end && !fill()) {
                    break;
                }
                byte b = buf[pos++];
                if (skipNewline) {
                    skipNewline = false;
                    if (b == '\n') {
                        continue;
                    }
                }
                any = true;
                if (b == '\n' || b == '\r') {
                    skipNewline = b == '\r';
                    return decode(len);
                }
                if (len == MAX_LINE_BYTES) {
                    throw InvalidInputException.atLine(path.toString(), lineNo + 1, "line longer than "
                            + MAX_LINE_BYTES + " bytes (not a table?)");
                }
                if (len == line.length) {
                    line = Arrays.copyOf(line, Math.min(2 * len, MAX_LINE_BYTES));
                }
                line[len++] = b;
            }
            return any ? decode(len) : null;
        }

        private String decode(int len) {
            lineNo++;
            try {
                return utf8.reset().decode(ByteBuffer.wrap(line, 0, len)).toString();
            } catch (CharacterCodingException e) {
                // decode again up to the malformed sequence, which is where the buffer stops
                ByteBuffer bytes = ByteBuffer.wrap(line, 0, len);
                utf8.reset().decode(bytes, CharBuffer.allocate(len), true);
                int at = bytes.position();
                throw InvalidInputException.atLine(path.toString(), lineNo, String.format(Locale.ROOT,
                        "not UTF-8 text: byte 0x%02x at column %d (save the file as UTF-8)", line[at] & 0xff, at + 1));
            }
        }

        private boolean fill() {
            try {
                int n = in.read(buf, 0, (int) Math.min(buf.length, maxBytes - total + 1));
                if (n <= 0) {
                    return false;
                }
                total += n;
                if (total > maxBytes) {
                    throw tooLarge("more");
                }
                pos = 0;
                end = n;
                return true;
            } catch (IOException e) {
                throw InvalidInputException.unreadable(path, "cannot read", e);
            }
        }

        @Override
        public void close() {
            try {
                in.close();
            } catch (IOException ignored) {
                // everything needed was read; a failing close changes nothing of it
            }
        }
    }

    /** The trimmed fields of a line: {@link #splitQuoted}, by commas alone where no field is quoted. */
    String[] split(String line, int lineNo) {
        if (line.indexOf('"') >= 0) {
            return splitQuoted(line, lineNo);
        }
        List<String> out = new ArrayList<>();
        int from = 0;
        for (int comma = line.indexOf(','); comma >= 0; comma = line.indexOf(',', from)) {
            out.add(line.substring(from, comma).trim());
            from = comma + 1;
        }
        out.add(line.substring(from).trim());
        return out.toArray(new String[0]);
    }

    /** The trimmed fields of a line whose fields may be quoted (inner quotes doubled), one character at a time. */
    String[] splitQuoted(String line, int lineNo) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        // the field (0-based) whose quote came after its first characters, or -1
        int stray = -1;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"') {
                    if (i + 1 < line.length() && line.charAt(i + 1) == '"') {
                        cur.append('"');
                        i++;
                    } else {
                        quoted = false;
                        // a quote that closes is no stray one left open
                        stray = -1;
                    }
                } else {
                    cur.append(c);
                }
            } else if (c == '"') {
                quoted = true;
                if (!cur.toString().isBlank()) {
                    // a quote after a field's first characters: the field was not quoted
                    stray = out.size();
                }
            } else if (c == ',') {
                out.add(cur.toString().trim());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (quoted && stray >= 0) {
            throw InvalidInputException.atLine(source, lineNo, "field " + (stray + 1) + " holds a quote it does not "
                    + "start with, and no quote closes it on its line: quote the whole field, its quote written twice "
                    + "(\"ab\"\"c\" for ab\"c)");
        }
        if (quoted) {
            throw InvalidInputException.atLine(source, lineNo, "a quoted field does not end on its line (a field "
                    + "spanning lines is not read; a quote inside a field is written twice)");
        }
        out.add(cur.toString().trim());
        return out.toArray(new String[0]);
    }

    /** The column names, in file order. */
    public List<String> columns() {
        return List.copyOf(header);
    }

    /** A field for a CSV line: quoted (inner quotes doubled) when it holds a comma, a quote or a line break. */
    public static String quote(String field) {
        if (field.indexOf(',') < 0 && field.indexOf('"') < 0 && field.indexOf('\n') < 0) {
            return field;
        }
        return '"' + field.replace("\"", "\"\"") + '"';
    }

    /**
     * A field of a table people open in a spreadsheet: {@link #quote}d, and a text starting with {@code =},
     * {@code +}, {@code -}, {@code @}, a tab or a carriage return (which a spreadsheet would run as a formula) written
     * with a leading apostrophe; numbers (as {@code -1.5}) are written as they are.
     */
    public static String cell(String field) {
        if (!field.isEmpty() && "=+-@\t\r".indexOf(field.charAt(0)) >= 0 && !isNumber(field)) {
            return quote("'" + field);
        }
        return quote(field);
    }

    /** A plain decimal number, as the tables are written: digits, a sign, a fraction, an exponent; no more. */
    private static final java.util.regex.Pattern DECIMAL = java.util.regex.Pattern.compile(
            "[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?|[+-]?(NaN|Infinity)");

    /**
     * Parses a table's number as it is written: a plain decimal (surrounding blanks ignored), or {@code NaN} and
     * {@code Infinity}, which the readers' range checks refuse by name. Java's other number syntax, which
     * {@link Double#parseDouble} also takes ({@code 0x1p12}, {@code 5000d}, {@code 2f}), is no table's number.
     *
     * @throws NumberFormatException where the text is not such a number
     */
    public static double parseNumber(String text) {
        String s = text.strip();
        if (!DECIMAL.matcher(s).matches()) {
            throw new NumberFormatException("not a decimal number: '" + s + "'");
        }
        return Double.parseDouble(s);
    }

    /** A whole number as tables and the command line write it: an optional sign and ASCII digits. */
    private static final java.util.regex.Pattern WHOLE = java.util.regex.Pattern.compile("[+-]?[0-9]{1,19}");

    /**
     * Parses a whole number as it is written (surrounding blanks ignored): ASCII digits only, where
     * {@link Long#parseLong} also takes fullwidth and other scripts' digits, which a copy from a page brings
     * unnoticed and the outputs would echo.
     *
     * @throws NumberFormatException where the text is not such a number, or beyond a {@code long}
     */
    public static long parseWhole(String text) {
        String s = text.strip();
        if (!WHOLE.matcher(s).matches()) {
            throw new NumberFormatException("not a whole number in ASCII digits: '" + s + "'");
        }
        return Long.parseLong(s);
    }

    private static boolean isNumber(String s) {
        try {
            parseNumber(s);
            return !s.trim().isEmpty() && Character.isDigit(s.trim().charAt(s.trim().length() - 1));
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The file name used in errors. */
    public String source() {
        return source;
    }

    /**
     * Refuses a row that repeats an earlier one in every column named (stripped; a column the table lacks reads as
     * empty): a copied measurement, which would weigh twice.
     *
     * @param columns the columns a measurement is told apart by (its time among them: a measurement repeated has
     *                another)
     * @throws InvalidInputException naming the row's line and the line it repeats
     */
    public void refuseCopiedRows(List<String> columns) {
        Map<List<String>, Integer> seen = new java.util.HashMap<>();
        for (int r = 0; r < size(); r++) {
            List<String> key = new ArrayList<>();
            for (String c : columns) {
                key.add(opt(r, c).map(String::strip).orElse(""));
            }
            Integer first = seen.putIfAbsent(key, line(r));
            if (first != null) {
                throw InvalidInputException.atLine(source(), line(r), "repeats line " + first + " in every column ("
                        + String.join(", ", columns) + "): a copied row would weigh twice; remove one");
            }
        }
    }

    /** Number of data rows (blank lines are skipped). */
    public int size() {
        return rows.size();
    }

    /**
     * The first data row that repeats an earlier one field for field, as {@code {its line, the earlier row's line}}
     * (1-based file lines), or empty: a row copied by mistake, which a reader would take as a second measurement.
     */
    public Optional<int[]> repeatedRow() {
        Map<List<String>, Integer> seen = new HashMap<>();
        for (int r = 0; r < rows.size(); r++) {
            Integer first = seen.putIfAbsent(List.of(rows.get(r)), line(r));
            if (first != null) {
                return Optional.of(new int[] {line(r), first});
            }
        }
        return Optional.empty();
    }

    /** The 1-based file line of a data row. */
    public int line(int row) {
        return lineNumbers.get(row);
    }

    /** True when the header has this column. */
    public boolean has(String column) {
        asked.add(column);
        return columns.containsKey(column);
    }

    /**
     * The column names asked for so far ({@link #has}, {@link #get}, {@link #opt} and the typed readers), whether
     * the table has them or not: after a reader has read a row, the columns it knows.
     */
    public java.util.Set<String> asked() {
        return java.util.Set.copyOf(asked);
    }

    /** A field as text. */
    public String get(int row, String column) {
        asked.add(column);
        Integer c = columns.get(column);
        if (c == null) {
            throw InvalidInputException.atLine(source, line(row), "missing column '" + column + "'");
        }
        return rows.get(row)[c];
    }

    /** A field, empty when the column is absent or the field blank. */
    public Optional<String> opt(int row, String column) {
        asked.add(column);
        Integer c = columns.get(column);
        return c == null || rows.get(row)[c].isEmpty() ? Optional.empty() : Optional.of(rows.get(row)[c]);
    }

    /** A positive integer field. */
    public int positiveInt(int row, String column) {
        long x = integer(row, column, 1, Integer.MAX_VALUE, "positive");
        return (int) x;
    }

    /** An integer field in {@code [min, max]}. */
    public int intInRange(int row, String column, int min, int max) {
        long x = integer(row, column, Long.MIN_VALUE, Long.MAX_VALUE, "");
        if (x < min || x > max) {
            throw InvalidInputException.atLine(source, line(row), column + " must be in " + min + ".." + max
                    + ", got " + get(row, column));
        }
        return (int) x;
    }

    /** A finite number field in {@code [min, max]}. */
    public double numberInRange(int row, String column, double min, double max) {
        double x = number(row, column);
        if (!(x >= min && x <= max)) {
            throw InvalidInputException.atLine(source, line(row), String.format(Locale.ROOT,
                    "%s must be a number in [%s, %s], got %s", column, plain(min), plain(max), get(row, column)));
        }
        return x;
    }

    /** A number as a message writes it: {@code 86400000}, {@code 0.001}, never {@code 8.64E7}. */
    public static String plain(double x) {
        return Double.isFinite(x) ? java.math.BigDecimal.valueOf(x).stripTrailingZeros().toPlainString()
                : String.valueOf(x);
    }

    /**
     * An optional finite number field in {@code [min, max]}: empty where the column is absent or the field blank, the
     * same error as {@link #numberInRange} where it is given out of range.
     */
    public java.util.OptionalDouble optionalNumberInRange(int row, String column, double min, double max) {
        return opt(row, column).isPresent() ? java.util.OptionalDouble.of(numberInRange(row, column, min, max))
                : java.util.OptionalDouble.empty();
    }

    /**
     * An optional integer field in {@code [min, max]}: empty where the column is absent or the field blank, the same
     * error as {@link #intInRange} where it is given out of range.
     */
    public java.util.OptionalInt optionalIntInRange(int row, String column, int min, int max) {
        return opt(row, column).isPresent() ? java.util.OptionalInt.of(intInRange(row, column, min, max))
                : java.util.OptionalInt.empty();
    }

    /** A non-negative integer field (e.g. a padding). */
    public long nonNegativeLong(int row, String column) {
        return integer(row, column, 0, Long.MAX_VALUE, "non-negative");
    }

    /** A finite positive number field. */
    public double positiveFinite(int row, String column) {
        double x = number(row, column);
        if (!Double.isFinite(x) || x <= 0) {
            throw InvalidInputException.atLine(source, line(row), column + " must be finite and positive, got "
                    + get(row, column));
        }
        return x;
    }

    /** A finite non-negative number field (e.g. a time that may be zero). */
    public double nonNegativeFinite(int row, String column) {
        double x = number(row, column);
        if (!Double.isFinite(x) || x < 0) {
            throw InvalidInputException.atLine(source, line(row), column + " must be finite and >= 0, got "
                    + get(row, column));
        }
        return x;
    }

    private long integer(int row, String column, long min, long max, String what) {
        String v = get(row, column);
        long x;
        try {
            x = parseWhole(v);
        } catch (NumberFormatException e) {
            throw InvalidInputException.atLine(source, line(row), column + " is not an integer: '" + v + "'");
        }
        if (x < min) {
            throw InvalidInputException.atLine(source, line(row), column + " must be " + what + ", got " + v);
        }
        if (x > max) {
            throw InvalidInputException.atLine(source, line(row), column + " is not an integer up to " + max + ": '"
                    + v + "'");
        }
        return x;
    }

    private double number(int row, String column) {
        String v = get(row, column);
        double x;
        try {
            x = parseNumber(v);
        } catch (NumberFormatException e) {
            throw InvalidInputException.atLine(source, line(row), column + " is not a number: '" + v + "'");
        }
        return x;
    }
}
