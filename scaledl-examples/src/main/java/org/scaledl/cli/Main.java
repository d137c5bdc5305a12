package org.scaledl.cli;

import java.io.PrintWriter;
import org.scaledl.InvalidInputException;
import org.scaledl.Version;
import org.scaledl.workload.Phase;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code scaledl} command line: {@code java -jar scaledl-examples/target/scaledl.jar <command>}. Every command
 * answers {@code --help} (usage on stdout, exit 0); {@code scaledl help COMMAND} does the same. Errors print one line
 * on stderr ({@code --verbose} adds the stack trace) and exit with:
 *
 * <ul>
 *   <li>0: success</li>
 *   <li>1: bad input data (a file, line or node is named)</li>
 *   <li>2: usage error: an unknown option or value, or a request the model refuses (a device it cannot predict,
 *       a graph with unresolved layers without {@code --allow-partial})</li>
 *   <li>3: internal error (a bug: please report it with the {@code --verbose} output)</li>
 *   <li>4: a file could not be written, or standard output could not (a full disk, a closed pipe)</li>
 *   <li>5: out of memory (the message says how to give the JVM more: {@code java -Xmx4g -jar scaledl.jar ...})</li>
 * </ul>
 */
@Command(name = "scaledl", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Predicts the runtime of deep-learning workloads (ScaleDL).",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:bad input data (the message names the file, line or node), or a job whose "
            + "layout, precision or settings do not go together", "2:usage error, or a request the model refuses",
            "3:internal error (report it with --verbose)",
            "4:a file or standard output could not be written", "5:out of memory (give the JVM more: java -Xmx4g "
                + "-jar scaledl.jar ...)"})
public final class Main implements java.util.concurrent.Callable<Integer> {
    /**
     * The commands, in the order {@code --help} lists them. A command line that names one builds only that one (the
     * option parser's model of all of them costs a cold JVM about 0.15 s).
     */
    static java.util.List<Class<?>> commands() {
        return Commands.ALL;
    }

    /** The command classes, loaded on first use (not before {@link #main} has started the model's prefetch). */
    private static final class Commands {
        static final java.util.List<Class<?>> ALL = java.util.List.of(CommandLine.HelpCommand.class,
                InspectCommand.class, FitCommand.class, PredictCommand.class, EvaluateCommand.class,
                EvaluateCommCommand.class, EvaluateGpuCommand.class, EvaluateMachinesCommand.class, PlanCommand.class,
                LearningCurveCommand.class, BenchFedorovCommand.class, BenchCommand.class, DemoCommand.class,
                DevicesCommand.class, LayoutsCommand.class, ScalingCommand.class, EvaluateMegatronCommand.class,
                EvaluateClustersCommand.class, RunsCommand.class);
    }

    /** Exit status for bad input data. */
    static final int BAD_INPUT = 1;
    /** Exit status for usage errors and refused requests. */
    static final int USAGE = 2;
    /** Exit status for internal errors. */
    static final int INTERNAL = 3;
    /** Exit status when a file or standard output cannot be written. */
    static final int IO = 4;
    /** Exit status when the JVM runs out of memory. */
    static final int OUT_OF_MEMORY = 5;
    /** The message for {@link #OUT_OF_MEMORY}, composed before it is needed. */
    private static final String OUT_OF_MEMORY_MESSAGE = "scaledl: error: out of memory: give the JVM more with "
            + "java -Xmx4g -jar scaledl.jar ... (it had " + (Runtime.getRuntime().maxMemory() >> 20) + " MiB)";
    /** The message when standard output could not take everything printed. */
    static final String STDOUT_LOST = "scaledl: error: cannot write to standard output (a full disk, or a pipe "
            + "closed early): the output is incomplete";

    @Option(names = "--verbose", description = "Print stack traces on errors.", scope = CommandLine.ScopeType.INHERIT)
    boolean verbose;

    @Option(names = {"-q", "--quiet"}, description = "No progress on stderr.", scope = CommandLine.ScopeType.INHERIT)
    static boolean quiet;

    /** {@code scaledl} without a command: the usage on stderr, exit {@value #USAGE}. */
    @Override
    public Integer call() {
        commandLine().usage(System.err);   // every command listed, as --help lists them
        return USAGE;
    }

    /** The version from the build. */
    static final class VersionProvider implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"scaledl " + Version.get(), "Java " + System.getProperty("java.version")};
        }
    }

    /**
     * The library's advice in its messages names Java calls; on the command line, the options that do the same
     * (literal text, replaced in order).
     */
    private static final String[][] API_TO_CLI = {
        {"allowingPartialGraphs() (CLI --allow-partial)", "--allow-partial"},
        {"(Workload.Builder.device)", "(--device, or a device column)"},
        {"(predictor.calibrate(runs))", "(scaledl fit --calibrate MODEL --data DIR_OF_ITS_RUNS)"},
        {"LayerCost.device(...).withCollectives", "scaledl fit --gpu on data with DeepBench all-reduce tables"},
        {"LayerCost.device", "scaledl fit --gpu"},
        {" (OnnxImporter.Options.maxFileBytes)", ""},
    };
    /** The API half of "(API: ...; CLI: --dim name=size)" advice. */
    private static final java.util.regex.Pattern API_ADVICE = java.util.regex.Pattern.compile(
            " \\(API: .*?; CLI: [^)]*\\)");

    /** A library message as the command line says it: Java calls replaced by the options that do the same. */
    static String forCli(String message) {
        if (message == null) {
            return "";
        }
        String m = API_ADVICE.matcher(message).replaceAll("");
        for (String[] r : API_TO_CLI) {
            m = m.replace(r[0], r[1]);
        }
        return m;
    }

    /**
     * A message as it reaches the terminal: each line {@linkplain org.scaledl.InvalidInputException#escaped escaped}
     * (a terminal escape in an argument the message quotes shows as <code>&#92;u001b</code>).
     */
    static String onScreen(String message) {
        return String.join("\n", java.util.Arrays.stream(message.split("\n", -1))
                .map(org.scaledl.InvalidInputException::escaped).toList());
    }

    /** Runs the command line and exits with its status. */
    public static void main(String[] args) {
        // the bundled model a command names starts loading before anything else of the command line is
        ModelArgument.prefetch(args);
        stdout = Stdout.install();
        System.exit(execute(args));
    }

    /**
     * Notes said once a command has succeeded (how a short device name was read): an error stays the one line every
     * error is. A command line runs on one thread ({@link #execute} is not for concurrent use).
     */
    private static final java.util.List<String> LATER = new java.util.ArrayList<>();

    /** Says {@code line} on stderr once the command has succeeded ({@link #LATER}). */
    static void sayOnSuccess(String line) {
        if (!LATER.contains(line)) {
            LATER.add(line);
        }
    }

    /** Standard output where {@link #main} opened it, to tell a reader that left from a full disk. */
    private static Stdout stdout;

    /**
     * Standard output as the JVM opens it (its encoding, flushed at each line), remembering why a write failed:
     * a reader that left early ({@code scaledl inspect --model gpu | head}) closed the pipe, which is what was asked
     * for, not lost output, and is not an error (as for tools the pipe's signal stops); a full disk is.
     */
    static final class Stdout extends java.io.FilterOutputStream {
        private volatile String failure;

        private Stdout() {
            super(new java.io.FileOutputStream(java.io.FileDescriptor.out));
        }

        static Stdout install() {
            Stdout out = new Stdout();
            // the encoding the JVM gives standard output: stdout.encoding (Java 19 on), sun.stdout.encoding (a
            // console), else the platform's
            String encoding = System.getProperty("stdout.encoding", System.getProperty("sun.stdout.encoding",
                    System.getProperty("native.encoding")));
            java.nio.charset.Charset charset;
            try {
                charset = encoding == null ? java.nio.charset.Charset.defaultCharset()
                        : java.nio.charset.Charset.forName(encoding);
            } catch (IllegalArgumentException e) {
                charset = java.nio.charset.Charset.defaultCharset();
            }
            System.setOut(new java.io.PrintStream(new java.io.BufferedOutputStream(out, 8192), true, charset));
            return out;
        }

        @Override
        public void write(byte[] b, int off, int len) throws java.io.IOException {
            try {
                out.write(b, off, len);
            } catch (java.io.IOException e) {
                failure = failure == null ? String.valueOf(e.getMessage()) : failure;
                throw e;
            }
        }

        /**
         * Whether the reader of a pipe closed it before all was written ({@code EPIPE}): a write to a pipe fails for
         * no other reason, so where the system tells what standard output is (Linux: {@code /proc/self/fd/1}), a
         * failed write to a pipe; elsewhere, the system's English message (a translated one reads as a lost write).
         */
        boolean readerLeft() {
            if (failure == null) {
                return false;
            }
            try {
                return java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/1")).toString()
                        .startsWith("pipe:");
            } catch (java.io.IOException | UnsupportedOperationException | SecurityException e) {
                return failure.toLowerCase(java.util.Locale.ROOT).contains("broken pipe");
            }
        }
    }

    /**
     * Runs the command line and returns its exit status (for tests). Whatever the command, output that standard
     * output lost ({@link java.io.PrintStream} swallows the error, so it is checked once here) is exit status
     * {@value #IO}, but for a pipe its reader closed early where {@link #main} opened standard output (quiet, its
     * status unchanged), and running out of memory anywhere is {@value #OUT_OF_MEMORY}.
     */
    public static int execute(String... args) {
        boolean verbose = java.util.Arrays.asList(args).contains("--verbose");
        int code;
        LATER.clear();
        try {
            code = run(args);
        } catch (OutOfMemoryError e) {
            System.err.println(OUT_OF_MEMORY_MESSAGE);
            if (verbose) {
                e.printStackTrace();
            }
            System.err.flush();
            return OUT_OF_MEMORY;
        }
        System.out.flush();
        if (System.out.checkError() && code == 0 && !helpOnly(args)) {
            if (stdout != null && stdout.readerLeft()) {
                return code;
            }
            System.err.println(STDOUT_LOST);
            System.err.flush();
            return IO;
        }
        if (code == 0) {
            LATER.forEach(System.err::println);
        }
        return code;
    }

    /**
     * Whether the command line asks only for help ({@code --help}, {@code -h}, {@code help}, {@code --version}):
     * help cut short by a pipe ({@code scaledl predict --help | head}) is what was asked for, not lost output.
     */
    private static boolean helpOnly(String... args) {
        if (args.length > 0 && args[0].equals("help")) {
            return true;
        }
        for (String a : args) {
            // (an option's value is never one of these: a file named help is a value, the help command is first)
            if (a.equals("--help") || a.equals("-h") || a.equals("--version") || a.equals("-V")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The parser of a command line: with only the command it names (every command for {@code help}, for options of
     * {@code scaledl} itself, and for a name that is no command, so that the error can suggest one).
     */
    static CommandLine commandLine(String... args) {
        CommandLine cl = new CommandLine(new Main());
        Class<?> named = null;
        if (args.length > 0 && !args[0].equals("help")) {
            for (Class<?> c : commands()) {
                CommandLine.Command a = c.getAnnotation(CommandLine.Command.class);
                if (a.name().equals(args[0]) || java.util.Arrays.asList(a.aliases()).contains(args[0])) {
                    named = c;
                }
            }
        }
        for (Class<?> c : named != null ? java.util.List.<Class<?>>of(named) : commands()) {
            cl.addSubcommand(c);
        }
        CommandLine layouts = cl.getSubcommands().get("layouts");
        if (layouts != null) {
            // the options layouts chooses itself: read (to be refused with the reason), not listed in its help, which
            // names them in its footer
            CommandLine.Model.CommandSpec spec = layouts.getCommandSpec();
            for (String name : LayoutsCommand.HIDDEN) {
                respecify(spec, name, "LayoutsCommand.HIDDEN", b -> b.hidden(true));
            }
            // the shared options layouts reads as constraints: their help says so
            LayoutsCommand.FILTERS.forEach((name, help) -> respecify(spec, name, "LayoutsCommand.FILTERS",
                    b -> b.description(help)));
            java.util.List<String> chosen = LayoutsCommand.CHOSEN;
            spec.usageMessage().footer("%nlayouts chooses " + String.join(", ", chosen.subList(0, chosen.size() - 1))
                    + " and " + chosen.get(chosen.size() - 1) + " itself for every layout it ranks: they are refused "
                    + "here (the predict commands it prints take them).");
        }
        return cl;
    }

    /**
     * Replaces a command's option with a copy changed by {@code change} (hidden, described otherwise).
     *
     * @param list the list that names the option, for the error where the command has no such option
     */
    private static void respecify(CommandLine.Model.CommandSpec spec, String name, String list,
            java.util.function.UnaryOperator<CommandLine.Model.OptionSpec.Builder> change) {
        CommandLine.Model.OptionSpec o = spec.findOption(name);
        if (o == null) {
            throw new IllegalStateException(spec.name() + " has no option " + name + ": " + list + " names one the "
                    + "options do not have");
        }
        spec.remove(o);
        spec.addOption(change.apply(CommandLine.Model.OptionSpec.builder(o)).build());
    }

    /**
     * What the first unmatched argument was likely meant as: with a dash, the command's option it looks like a
     * misspelling of; else, for a command of subcommands, the subcommand; else (a command's argument that it takes
     * no positional value for) the option its file belongs to ({@link #fileOption}), as {@code --option file}. The
     * unmatched arguments are the exception's own, or where a required option was missing
     * ({@link CommandLine.MissingParameterException}), those the command line collected before it.
     */
    static java.util.Optional<String> didYouMean(CommandLine.ParameterException e) {
        java.util.List<String> unmatched = e instanceof CommandLine.UnmatchedArgumentException u ? u.getUnmatched()
                : e.getCommandLine().getUnmatchedArguments();
        if (unmatched.isEmpty()) {
            return java.util.Optional.empty();
        }
        String typed = unmatched.get(0);
        CommandLine.Model.CommandSpec spec = e.getCommandLine().getCommandSpec();
        if (!typed.startsWith("-") && spec.subcommands().isEmpty()) {
            java.util.List<CommandLine.Model.ArgSpec> missing = e instanceof CommandLine.MissingParameterException m
                    ? m.getMissing() : java.util.List.of();
            return fileOption(spec, typed, missing).map(o -> o + " " + typed);
        }
        java.util.Collection<String> known = typed.startsWith("-") ? spec.optionsMap().keySet()
                : spec.subcommands().keySet();
        String bare = typed.contains("=") ? typed.substring(0, typed.indexOf('=')) : typed;
        return org.scaledl.Suggestions.closest(bare, known.stream().filter(k -> k.length() > 2).toList());
    }

    /** A list option given with an empty value (a leading, trailing or doubled comma), said in words. */
    private static String emptyInList(CommandLine.Model.OptionSpec o, String given) {
        return "option '" + o.longestName() + "' has an empty value in its list" + (given == null ? ""
                : " (given '" + given + "')") + ": values are comma-separated, with none left out";
    }

    /**
     * A command line's mistake in words: for options it does not know, those options alone (picocli lists their values
     * among them, {@code Unknown options: '--tenser', '2'}); else picocli's message.
     */
    static String describe(CommandLine.ParameterException e) {
        if (e instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()
                && u.getUnmatched().get(0).startsWith("-")) {
            java.util.List<String> options = u.getUnmatched().stream()
                    .filter(a -> a.startsWith("-") && a.length() > 1 && !a.matches("-[0-9.].*")).distinct()
                    .map(a -> "'" + a + "'").toList();
            if (!options.isEmpty()) {
                return (options.size() == 1 ? "unknown option " : "unknown options ") + String.join(", ", options);
            }
        }
        if (e.getArgSpec() instanceof CommandLine.Model.OptionSpec o && o.isMultiValue() && !o.splitRegex().isEmpty()
                && e.getValue() != null && e.getValue().isBlank()) {
            // a leading or doubled comma: picocli tries to read the empty piece as a value
            return emptyInList(o, null);
        }
        String m = String.valueOf(e.getMessage());
        if (m.startsWith("Error: ") && (e instanceof CommandLine.MaxValuesExceededException
                || e instanceof CommandLine.MutuallyExclusiveArgsException)) {
            // picocli's account of an argument group matched twice: its groups' syntax, twice over
            return "an option given twice, or options that exclude each other given together: give " + groups(e)
                    + ", each option once";
        }
        if (m.startsWith("Error: Missing required argument")) {
            // a group's missing member, or the whole group missing: said without picocli's syntax
            String missing = m.substring(m.indexOf(':', 7) + 1).strip();
            return missing.startsWith("(") ? "give " + groups(e)
                    : "missing " + missing.replaceAll("=<[^>]*>", "") + " (give " + groups(e) + ", not options of "
                    + "two ways)";
        }
        return m;
    }

    /**
     * A command's argument groups in words: a group of alternatives that are groups themselves as each one's options
     * ({@code --train and --test, or --data and --cv (optional --folds)}), one of plain options as
     * {@code one of --data, --candidates}; several groups joined by {@code ; and }.
     */
    private static String groups(CommandLine.ParameterException e) {
        java.util.List<String> groups = new java.util.ArrayList<>();
        for (CommandLine.Model.ArgGroupSpec g : e.getCommandLine().getCommandSpec().argGroups()) {
            java.util.List<String> ways = new java.util.ArrayList<>();
            for (CommandLine.Model.ArgGroupSpec sub : g.subgroups()) {
                ways.add(String.join(" and ", sub.options().stream().filter(o -> o.required())
                        .map(CommandLine.Model.OptionSpec::longestName).toList()) + sub.options().stream()
                        .filter(o -> !o.required()).map(o -> " (optional " + o.longestName() + ")")
                        .collect(java.util.stream.Collectors.joining()));
            }
            if (!ways.isEmpty()) {
                groups.add(String.join(", or ", ways));
            } else if (!g.options().isEmpty()) {
                groups.add("one of " + String.join(", ", g.options().stream()
                        .map(CommandLine.Model.OptionSpec::longestName).toList()));
            }
        }
        return groups.isEmpty() ? "the options the command's help lists" : String.join("; and ", groups);
    }

    /**
     * The option a file or folder given without one belongs to, among the command's options that take a path or a
     * name and were not given: a required one that is missing, where the file's kind allows it; else by what the
     * file is (a folder, a CSV table, a {@code config.json}, an ONNX graph, a training log, a saved model), the first
     * of that kind's options the command has. Nothing for a blank argument or one of no such kind.
     */
    static java.util.Optional<String> fileOption(CommandLine.Model.CommandSpec spec, String typed,
            java.util.List<CommandLine.Model.ArgSpec> missing) {
        if (typed.isBlank()) {
            return java.util.Optional.empty();
        }
        String lower = typed.toLowerCase(java.util.Locale.ROOT);
        boolean folder;
        try {
            folder = java.nio.file.Files.isDirectory(java.nio.file.Path.of(typed));
        } catch (java.nio.file.InvalidPathException e) {
            folder = false;
        }
        java.util.List<String> options = folder ? java.util.List.of("--data")
                : lower.endsWith(".csv") ? java.util.List.of("--runs", "--candidates", "--out", "--devices")
                : lower.endsWith(".json") ? java.util.List.of("--transformer")
                : lower.endsWith(".onnx") ? java.util.List.of("--graph")
                : lower.endsWith(".log") || lower.endsWith(".txt") ? java.util.List.of("--from-log")
                : lower.endsWith(".sdl") ? java.util.List.of("--model", "--calibrate", "--out")
                : java.util.List.of();
        java.util.function.Predicate<String> open = o -> {
            CommandLine.Model.OptionSpec option = spec.findOption(o);
            return option != null && isPathOrName(option) && option.originalStringValues().isEmpty();
        };
        java.util.Optional<String> required = missing.stream()
                .filter(a -> a instanceof CommandLine.Model.OptionSpec)
                .map(a -> ((CommandLine.Model.OptionSpec) a).longestName()).filter(options::contains).findFirst();
        return required.isPresent() ? required : options.stream().filter(open).findFirst();
    }

    /** Whether an option takes a path or a name (not a number): {@code plan --runs} counts runs. */
    private static boolean isPathOrName(CommandLine.Model.OptionSpec o) {
        java.util.function.Predicate<Class<?>> text = c -> java.nio.file.Path.class.isAssignableFrom(c)
                || java.io.File.class.isAssignableFrom(c) || c == String.class;
        return text.test(o.type()) || (o.type().isArray() && text.test(o.type().getComponentType()))
                || java.util.Arrays.stream(o.auxiliaryTypes()).anyMatch(text);
    }

    /**
     * Refuses a comma-separated list option given more than once ({@code --gpus 2,4 --gpus 8}): picocli joins the
     * occurrences, where every other option given twice is refused; options meant to be repeated
     * ({@code fit --data A --data B}) take no comma list and are left alone.
     */
    private static void refuseRepeatedLists(CommandLine.ParseResult parsed) {
        for (CommandLine.ParseResult r = parsed; r != null; r = r.subcommand()) {
            for (CommandLine.Model.OptionSpec o : r.matchedOptions()) {
                if (o.isMultiValue() && !o.splitRegex().isEmpty() && o.originalStringValues().size() > 1) {
                    throw new CommandLine.ParameterException(r.commandSpec().commandLine(), "option '"
                            + o.longestName() + "' should be specified only once, its values comma-separated (given "
                            + String.join(" and ", o.originalStringValues()) + ")");
                }
                if (o.isMultiValue() && !o.splitRegex().isEmpty()) {
                    for (String given : o.originalStringValues()) {
                        if (java.util.Arrays.stream(given.split(o.splitRegex(), -1)).anyMatch(String::isBlank)) {
                            throw new CommandLine.ParameterException(r.commandSpec().commandLine(),
                                    emptyInList(o, given));
                        }
                    }
                }
            }
        }
    }

    /**
     * Refuses an option-like value of an option taking several files ({@code runs --from-log a.log --warmupp 3}):
     * picocli gives such an option every following token that is not one of the command's options, so a misspelt
     * option was read as a log file ("no such file"); one that is an existing file is kept.
     */
    private static void refuseOptionsTakenAsValues(CommandLine.ParseResult parsed) {
        for (CommandLine.ParseResult r = parsed; r != null; r = r.subcommand()) {
            for (CommandLine.Model.OptionSpec o : r.matchedOptions()) {
                if (!o.isMultiValue() || !isPathOrName(o)) {
                    continue;
                }
                for (String given : o.originalStringValues()) {
                    // (an en or em dash, as text pasted from a formatted page carries, for '--')
                    boolean dash = given.startsWith("\u2013") || given.startsWith("\u2014");
                    if ((given.startsWith("-") || dash) && given.length() > 1 && !java.nio.file.Files.exists(
                            java.nio.file.Path.of(given))) {
                        String option = dash ? "--" + given.substring(1) : given;
                        String typed = option.contains("=") ? option.substring(0, option.indexOf('=')) : option;
                        java.util.List<String> names = r.commandSpec().options().stream()
                                .flatMap(x -> java.util.Arrays.stream(x.names())).toList();
                        throw new CommandLine.ParameterException(r.commandSpec().commandLine(), "unknown option '"
                                + InvalidInputException.printable(dash ? given : typed, 60) + "'" + (dash
                                ? " (its dash is not '-')" : "") + org.scaledl.Suggestions
                                        .closest(typed, names).map(n -> " (did you mean " + n + "?)").orElse("")
                                + ", given among " + o.longestName() + "'s files");
                    }
                }
            }
        }
    }

    /** A converter by a table's parser: a text it refuses is no {@code what} in ASCII digits. */
    private static <T> CommandLine.ITypeConverter<T> ascii(java.util.function.Function<String, T> parse, String what) {
        return text -> {
            try {
                return parse.apply(text);
            } catch (NumberFormatException e) {
                throw new CommandLine.TypeConversionException("'" + InvalidInputException.printable(text, 40)
                        + "' is not " + what + " in ASCII digits");
            }
        };
    }

    private static int run(String... args) {
        quiet = false;
        ModelArgument.prefetch(args);
        CommandLine cl = commandLine(args);
        // an empty argument is no file (Path.of("") is the working directory, which would be read as one)
        cl.registerConverter(java.nio.file.Path.class, text -> {
            if (text.isEmpty()) {
                throw new CommandLine.TypeConversionException("an empty path names no file");
            }
            return java.nio.file.Path.of(text);
        });
        // numbers in ASCII digits, as a table's are (Java's own parsers take fullwidth and other scripts' digits,
        // which a copy from a page brings unnoticed and the outputs then echo)
        CommandLine.ITypeConverter<Long> integer = ascii(org.scaledl.io.CsvTable::parseWhole, "a whole number");
        cl.registerConverter(Long.class, integer);
        cl.registerConverter(long.class, integer);
        CommandLine.ITypeConverter<Integer> small = text -> {
            long x = integer.convert(text);
            if (x != (int) x) {
                throw new CommandLine.TypeConversionException("'" + InvalidInputException.printable(text, 40)
                        + "' is out of range (at most " + Integer.MAX_VALUE + ")");
            }
            return (int) x;
        };
        cl.registerConverter(Integer.class, small);
        cl.registerConverter(int.class, small);
        CommandLine.ITypeConverter<Double> decimal = ascii(org.scaledl.io.CsvTable::parseNumber, "a decimal number");
        cl.registerConverter(Double.class, decimal);
        cl.registerConverter(double.class, decimal);
        cl.registerConverter(Phase.class, text -> {
            try {
                return Phase.parse(text);
            } catch (InvalidInputException e) {
                throw new CommandLine.TypeConversionException(e.detail());
            }
        });
        cl.setExecutionStrategy(parsed -> {
            refuseRepeatedLists(parsed);
            refuseOptionsTakenAsValues(parsed);
            return new CommandLine.RunLast().execute(parsed);
        });
        cl.setParameterExceptionHandler((e, cmdArgs) -> {
            // a wrong or missing option is one line naming it and where the help is, not the whole usage
            PrintWriter err = e.getCommandLine().getErr();
            String name = e.getCommandLine().getCommandName();
            err.println(onScreen("scaledl: error: " + forCli(describe(e)) + " (" + didYouMean(e).map(x -> "did you "
                    + "mean " + x + "? ").orElse("") + "scaledl " + (name.equals("scaledl") ? "" : name + " ")
                    + "--help lists the " + (name.equals("scaledl") ? "commands" : "options") + ")"));
            err.flush();
            return USAGE;
        });
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            boolean verbose = java.util.Arrays.asList(args).contains("--verbose");
            PrintWriter err = cmd.getErr();
            int code;
            String message;
            if (e instanceof InvalidInputException) {
                code = BAD_INPUT;
                message = forCli(e.getMessage());
            } else if (e instanceof IllegalArgumentException) {
                code = USAGE;
                message = forCli(e.getMessage());
            } else if (e instanceof java.io.UncheckedIOException) {
                code = IO;
                message = e.getMessage();
            } else {
                code = INTERNAL;
                message = "internal error: " + e.getClass().getSimpleName() + ": " + e.getMessage()
                        + (verbose ? "" : " (run with --verbose for the stack trace, and please report it)");
            }
            err.println(onScreen("scaledl: error: " + message));
            if (verbose) {
                e.printStackTrace(err);
            }
            err.flush();
            return code;
        });
        return cl.execute(args);
    }
}
