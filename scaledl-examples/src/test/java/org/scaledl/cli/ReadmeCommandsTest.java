package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's {@code scaledl} commands run as written: every {@code java -jar ... scaledl.jar} command of its code
 * blocks whose input files the repository holds is run (in process, from the repository's root: its relative paths
 * resolved there, its outputs written to a temporary folder) and must succeed. Commands on files a user makes first
 * ({@code mine.sdl}, {@code jobs.csv}, {@code <this machine>}) are templates and are counted, not run; {@code demo}
 * (the main job) has its own tests.
 */
class ReadmeCommandsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern TOKEN = Pattern.compile("\"([^\"]*)\"|'([^']*)'|(\\S+)");
    private static final Pattern FILE = Pattern.compile(".*\\.(csv|onnx|sdl|json|log|svg)$");

    /** The commands of the README's code blocks, continuation lines joined and comments dropped. */
    static List<List<String>> commands(String readme) {
        List<List<String>> out = new ArrayList<>();
        boolean code = false;
        StringBuilder cur = new StringBuilder();
        for (String line : readme.split("\n", -1)) {
            if (line.startsWith("```")) {
                code = !code;
                continue;
            }
            if (!code) {
                continue;
            }
            String l = line.replaceAll("\\s+#\\s.*$", "").strip();
            boolean more = l.endsWith("\\");
            cur.append(more ? l.substring(0, l.length() - 1) : l).append(' ');
            if (!more) {
                String c = cur.toString().strip();
                cur.setLength(0);
                List<String> args = new ArrayList<>();
                Matcher m = TOKEN.matcher(c);
                while (m.find()) {
                    args.add(m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3));
                }
                int jar = args.indexOf("-jar");
                if (args.size() > 2 && args.get(0).equals("java") && jar == 1) {
                    out.add(args.subList(jar + 2, args.size()));
                }
            }
        }
        return out;
    }

    @Test
    void readmeCommandsRunAsWritten(@TempDir Path dir) throws Exception {
        List<List<String>> all = commands(Files.readString(ROOT.resolve("README.md")));
        int ran = 0;
        int templates = 0;
        for (List<String> cmd : all) {
            if (cmd.get(0).equals("demo")) {
                continue;
            }
            List<String> args = new ArrayList<>();
            boolean template = false;
            for (int i = 0; i < cmd.size(); i++) {
                String a = cmd.get(i);
                boolean output = i > 0 && cmd.get(i - 1).equals("--out");
                if (output) {
                    args.add(dir.resolve(Path.of(a).getFileName()).toString());
                } else if (a.contains("<")) {
                    template = true;
                } else if (FILE.matcher(a).matches() || a.contains("/")) {
                    Path p = ROOT.resolve(a);
                    template |= !Files.exists(p);
                    args.add(p.toString());
                } else {
                    args.add(a);
                }
            }
            if (template) {
                templates++;
                continue;
            }
            MainTest.Run r = MainTest.run(args.toArray(new String[0]));
            assertEquals(0, r.code(), String.join(" ", cmd) + ": " + r.err());
            assertTrue(!r.out().isBlank() || args.contains("--out"), String.join(" ", cmd) + " printed nothing");
            ran++;
        }
        // the README's GPU examples, devices, layouts and scaling at least; the rest need files a user makes
        assertTrue(ran >= 6, ran + " commands run of " + all.size());
        assertTrue(templates >= 3, templates + " templates");
    }
}
