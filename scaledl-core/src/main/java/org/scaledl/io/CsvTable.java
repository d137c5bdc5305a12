package org.scaledl.io;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.scaledl.InvalidInputException;

/**
 * A header-first comma-separated file, read whole, with line-numbered accessors. Fields may be double-quoted
 * (RFC 4180, without embedded line breaks). Every error is an {@link InvalidInputException} naming the file and the
 * 1-based line.
 *
 * <pre>{@code
 * CsvTable t = CsvTable.read(path, "gpu", "bytes", "time_ms");
 * for (int r = 0; r < t.size(); r++) {
 *     double ms = t.positiveFinite(r, "time_ms");
 * }
 * }</pre>
 */
public final class CsvTable {
    private final String source;
    private final Map<String, Integer> columns = new HashMap<>();
    private final List<String> header = new ArrayList<>();
    private final List<String[]> rows = new ArrayList<>();
    private final List<Integer> lineNumbers = new ArrayList<>();

    private CsvTable(String source) {
        this.source = source;
    }

    /** Reads a file and checks that the required columns exist. */
    public static CsvTable read(Path path, String... required) {
        List<String> lines;
        try {
            lines = Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw InvalidInputException.unreadable(path, "cannot read", e);
        }
        return parse(path.toString(), lines, required);
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
        String[] header = t.split(lines.get(first), first + 1);
        for (int i = 0; i < header.length; i++) {
            String h = header[i].trim();
            if (i == 0 && h.startsWith("\uFEFF")) {
                h = h.substring(1);
            }
            t.header.add(h);
            if (t.columns.put(h, i) != null) {
                throw InvalidInputException.atLine(source, first + 1, "duplicate column '" + h + "'");
            }
        }
        for (String r : required) {
            if (!t.columns.containsKey(r)) {
                throw InvalidInputException.atLine(source, first + 1, "missing column '" + r + "' (have "
                        + String.join(", ", header) + ")");
            }
        }
        for (int i = first + 1; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) {
                continue;
            }
            String[] f = t.split(lines.get(i), i + 1);
            if (f.length != header.length) {
                throw InvalidInputException.atLine(source, i + 1,
                        "has " + f.length + " fields, the header has " + header.length);
            }
            t.rows.add(f);
            t.lineNumbers.add(i + 1);
        }
        return t;
    }

    private String[] split(String line, int lineNo) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"') {
                    if (i + 1 < line.length() && line.charAt(i + 1) == '"') {
                        cur.append('"');
                        i++;
                    } else {
                        quoted = false;
                    }
                } else {
                    cur.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                out.add(cur.toString().trim());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (quoted) {
            throw InvalidInputException.atLine(source, lineNo, "unterminated quoted field");
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

    /** The file name used in errors. */
    public String source() {
        return source;
    }

    /** Number of data rows (blank lines are skipped). */
    public int size() {
        return rows.size();
    }

    /** The 1-based file line of a data row. */
    public int line(int row) {
        return lineNumbers.get(row);
    }

    /** True when the header has this column. */
    public boolean has(String column) {
        return columns.containsKey(column);
    }

    /** A field as text. */
    public String get(int row, String column) {
        Integer c = columns.get(column);
        if (c == null) {
            throw InvalidInputException.atLine(source, line(row), "missing column '" + column + "'");
        }
        return rows.get(row)[c];
    }

    /** A field, empty when the column is absent or the field blank. */
    public Optional<String> opt(int row, String column) {
        Integer c = columns.get(column);
        return c == null || rows.get(row)[c].isEmpty() ? Optional.empty() : Optional.of(rows.get(row)[c]);
    }

    /** A positive integer field. */
    public int positiveInt(int row, String column) {
        long x = integer(row, column, 1, Integer.MAX_VALUE, "positive");
        return (int) x;
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
            x = Long.parseLong(v);
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
            x = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw InvalidInputException.atLine(source, line(row), column + " is not a number: '" + v + "'");
        }
        return x;
    }
}
