package org.scaledl.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The machine the command line runs on, as the operating system describes it: the CPU's model name, its cores and
 * its widest vector instructions (Linux's {@code /proc/cpuinfo}; elsewhere the JVM's architecture and core count).
 * {@code predict} compares it with the machine a host prediction is for, and warns when they differ.
 *
 * @param cpu   the CPU's model name ("AMD EPYC 7B13"), or the architecture when the OS does not say
 * @param cores the processors the JVM sees
 * @param simd  {@code avx512}, {@code avx2}, {@code neon} or empty when unknown
 */
record LocalMachine(String cpu, int cores, String simd) {
    private static final Path CPUINFO = Path.of("/proc/cpuinfo");
    /** The first 256 KiB of cpuinfo hold the first processor's lines on any machine. */
    private static final int MAX_BYTES = 1 << 18;

    /** This machine. */
    static LocalMachine detect() {
        int cores = Runtime.getRuntime().availableProcessors();
        String arch = System.getProperty("os.arch", "cpu");
        if (!Files.isReadable(CPUINFO)) {
            return new LocalMachine(arch, cores, arch.contains("aarch64") ? "neon" : "");
        }
        try (var in = Files.newInputStream(CPUINFO)) {
            String text = new String(in.readNBytes(MAX_BYTES), java.nio.charset.StandardCharsets.UTF_8);
            return parse(text, cores, arch);
        } catch (IOException e) {
            return new LocalMachine(arch, cores, "");
        }
    }

    /** Reads {@code /proc/cpuinfo}'s text. */
    static LocalMachine parse(String cpuinfo, int cores, String arch) {
        String name = field(cpuinfo, "model name").or(() -> field(cpuinfo, "Model")).orElse(arch);
        List<String> flags = field(cpuinfo, "flags").or(() -> field(cpuinfo, "Features"))
                .map(f -> List.of(f.split("\\s+"))).orElse(List.of());
        String simd = flags.contains("avx512f") ? "avx512" : flags.contains("avx2") ? "avx2"
                : flags.contains("asimd") || flags.contains("neon") ? "neon" : "";
        return new LocalMachine(name.replaceAll("\\s+", " ").strip(), cores, simd);
    }

    private static Optional<String> field(String text, String key) {
        for (String line : text.split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).strip().equals(key)) {
                return Optional.of(line.substring(colon + 1).strip()).filter(v -> !v.isEmpty());
            }
        }
        return Optional.empty();
    }

    /**
     * Whether a machine of a predictor (its name: the companion's {@code "<CPU model> @ <host>"}, or a dataset's
     * description such as {@code "AMD EPYC 2-core VM"}) could be this one: the names share the CPU's model (one
     * contains the other, ignoring case, spacing and trademark signs). Names say nothing of clocks or memory, so a
     * match is a necessary condition, not proof.
     */
    boolean couldBe(String machineName) {
        String theirs = normal(machineName.split(" @ ", 2)[0]);
        String ours = normal(cpu);
        if (theirs.isEmpty() || ours.isEmpty()) {
            return false;
        }
        return theirs.contains(ours) || ours.contains(theirs);
    }

    /**
     * What sets a described machine apart from this one, in words ("4 cores there, 2 here"): the CPU vendor, the
     * model number where both names carry one, the cores, the vector units where both are known. Empty when nothing
     * that is known differs (clocks, caches and memory bandwidth of this machine are not read, so an empty list is a
     * necessary condition, not proof).
     */
    List<String> differences(org.scaledl.workload.Device theirs) {
        List<String> out = new java.util.ArrayList<>();
        String v1 = vendor(theirs.name());
        String v2 = vendor(cpu);
        if (!v1.isEmpty() && !v2.isEmpty() && !v1.equals(v2)) {
            out.add("CPU vendor " + v1 + " there, " + v2 + " here");
        } else {
            Optional<String> m1 = modelNumber(theirs.name());
            Optional<String> m2 = modelNumber(cpu);
            if (m1.isPresent() && m2.isPresent() && !m1.get().equals(m2.get())) {
                out.add("CPU model " + m1.get() + " there, " + m2.get() + " here");
            }
        }
        if (theirs.computeUnits() != cores) {
            out.add(theirs.computeUnits() + " cores there, " + cores + " here");
        }
        String simdThere = simdName(theirs.simdBits());
        if (!simdThere.isEmpty() && !simd.isEmpty() && !simdThere.equals(simd)) {
            out.add("vector units " + simdThere + " there, " + simd + " here");
        }
        return out;
    }

    private static String vendor(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return n.contains("amd") || n.contains("epyc") || n.contains("ryzen") ? "AMD"
                : n.contains("intel") || n.contains("xeon") || n.contains("core(tm)") ? "Intel"
                : n.contains("apple") ? "Apple"
                : n.contains("neoverse") || n.contains("graviton") || n.contains("ampere") || n.contains("aarch64")
                        ? "Arm" : "";
    }

    private static final java.util.regex.Pattern MODEL_NUMBER = java.util.regex.Pattern.compile(
            "\\b(\\d[0-9a-z]{3,})\\b");

    private static Optional<String> modelNumber(String name) {
        java.util.regex.Matcher m = MODEL_NUMBER.matcher(name.split(" @ ", 2)[0].toLowerCase(Locale.ROOT));
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    private static String simdName(int bits) {
        return bits >= 512 ? "avx512" : bits == 256 ? "avx2" : bits == 128 ? "neon" : "";
    }

    private static String normal(String s) {
        return s.toLowerCase(Locale.ROOT).replace("(r)", "").replace("(tm)", "").replace("cpu", "")
                .replaceAll("\\s+", " ").strip();
    }

    /** {@code AMD EPYC 7B13, 2 cores, avx2}. */
    String describe() {
        return cpu + ", " + cores + (cores == 1 ? " core" : " cores") + (simd.isEmpty() ? "" : ", " + simd);
    }
}
