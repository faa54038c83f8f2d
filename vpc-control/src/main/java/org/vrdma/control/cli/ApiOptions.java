package org.vrdma.control.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.vrdma.control.api.TokenFile;
import org.vrdma.control.client.ControlClient;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * How a command reaches the API (inherited by every subcommand): {@code --endpoint} and {@code
 * --token}, else the files a local controller writes in its data directory, and {@code -o}.
 */
public final class ApiOptions {
    /** Exit code of a request the API refused, or a controller that cannot be reached. */
    public static final int API_ERROR = 1;

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(
            names = "--endpoint",
            scope = ScopeType.INHERIT,
            description = "controller URL (default: $VRDMA_ENDPOINT, else the endpoint file in the data directory)")
    String endpoint;

    @Option(
            names = "--token",
            scope = ScopeType.INHERIT,
            description = "bearer token (default: $VRDMA_TOKEN, else --token-file)")
    String token;

    @Option(
            names = "--token-file",
            scope = ScopeType.INHERIT,
            description = "file holding the bearer token (default: api-token in the data directory)")
    Path tokenFile;

    @Option(
            names = "--data-dir",
            scope = ScopeType.INHERIT,
            description = "a local controller's data directory (default: $VRDMA_DATA_DIR, else ~/.vrdma/control)")
    Path dataDir;

    @Option(
            names = {"-o", "--output"},
            scope = ScopeType.INHERIT,
            description = "output format: table or json (default: table)")
    String output = "table";

    public static Path defaultDataDir() {
        String env = System.getenv("VRDMA_DATA_DIR");
        return env != null && !env.isBlank()
                ? Path.of(env)
                : Path.of(System.getProperty("user.home"), ".vrdma", "control");
    }

    Path dataDir() {
        return dataDir != null ? dataDir : defaultDataDir();
    }

    ControlClient client() throws IOException {
        String e = endpoint != null ? endpoint : System.getenv("VRDMA_ENDPOINT");
        if (e == null) {
            Path file = dataDir().resolve(ControllerCommand.ENDPOINT_FILE);
            if (!Files.exists(file)) {
                throw new IOException("no --endpoint given and no controller endpoint file at " + file
                        + " (start one with 'controller' or 'up')");
            }
            e = Files.readString(file).strip();
        }
        String t = token != null ? token : System.getenv("VRDMA_TOKEN");
        if (t == null) {
            t = TokenFile.read(tokenFile != null ? tokenFile : dataDir().resolve(TokenFile.FILE_NAME));
        }
        return new ControlClient(e, t);
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }

    boolean json() {
        return output.equals("json");
    }

    /** Runs one request and prints its result; returns the exit code. */
    int call(String method, String path, Object body, Map<String, String> headers, List<String> columns) {
        if (!output.equals("json") && !output.equals("table")) {
            err().println("error: -o takes json or table, not " + output);
            return 2;
        }
        try (ControlClient c = client()) {
            ControlClient.Response r = c.send(method, path, body, headers, java.time.Duration.ofSeconds(30));
            if (!r.ok()) {
                err().println("error: " + r.errorText());
                return API_ERROR;
            }
            if (r.status() == 204) {
                out().println("deleted " + path.substring(path.lastIndexOf('/') + 1));
            } else if (json()) {
                out().println(r.json().toPrettyString());
            } else {
                var node = r.json();
                List<com.fasterxml.jackson.databind.JsonNode> rows = new ArrayList<>();
                if (node.has("items")) {
                    node.path("items").forEach(rows::add);
                } else {
                    rows.add(node);
                }
                out().print(Table.render(columns, rows));
            }
            out().flush();
            return 0;
        } catch (IOException e) {
            err().println("error: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            return API_ERROR;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return API_ERROR;
        }
    }
}
