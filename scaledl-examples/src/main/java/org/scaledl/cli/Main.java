package org.scaledl.cli;

import java.io.PrintWriter;
import org.scaledl.InvalidInputException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code scaledl} command line: {@code java -jar scaledl-examples/target/scaledl.jar <command>}.
 * Errors print one line on stderr and exit non-zero; {@code --verbose} adds the stack trace.
 */
@Command(name = "scaledl", mixinStandardHelpOptions = true, version = "scaledl 0.1.0",
        description = "Predicts the runtime of deep-learning workloads (ScaleDL).",
        subcommands = {InspectCommand.class, FitCommand.class, PredictCommand.class, EvaluateCommand.class, EvaluateCommCommand.class, EvaluateGpuCommand.class, PlanCommand.class, LearningCurveCommand.class, BenchFedorovCommand.class, BenchCommand.class, DemoCommand.class})
public final class Main implements Runnable {
    @Option(names = "--verbose", description = "Print stack traces on errors.", scope = CommandLine.ScopeType.INHERIT)
    boolean verbose;

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /** Runs the command line and exits with its status. */
    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line and returns its exit status (for tests). */
    public static int execute(String... args) {
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            boolean verbose = java.util.Arrays.asList(args).contains("--verbose");
            PrintWriter err = cmd.getErr();
            String message = e instanceof InvalidInputException || e instanceof IllegalArgumentException
                    ? e.getMessage() : e.getClass().getSimpleName() + ": " + e.getMessage();
            err.println("scaledl: error: " + message);
            if (verbose) {
                e.printStackTrace(err);
            }
            err.flush();
            return e instanceof InvalidInputException ? 3 : 1;
        });
        return cl.execute(args);
    }
}
