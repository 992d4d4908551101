import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.TimeZone;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.quartz.CronExpression;

/**
 * Reference answers from Quartz's own CronExpression, used to check the Rust implementation.
 *
 * stdin:  one case per line, EXPR TAB FROM_EPOCH_MS TAB ZONE. Inside EXPR, a backslash-t stands for a
 *         tab and a double backslash for a backslash, so that tab-separated expressions fit on the line.
 * stdout: one line per case, in order:
 *         INVALID TAB message      the constructor rejected the expression
 *         ERROR TAB exception      getTimeAfter threw (Quartz accepts some expressions it cannot evaluate)
 *         TIMEOUT                  getTimeAfter did not return within the time limit
 *         t1 TAB t2 ...            up to COUNT fire times as epoch ms, each strictly after the previous
 *                                  one (the first after FROM); fewer, or an empty line, when it ends
 * args:   [COUNT] (default 5)
 */
public final class QuartzOracle {
    private static final long TIME_LIMIT_MS = 5000;

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        ExecutorService worker = newWorker();
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            if (parts.length != 3) {
                throw new IllegalArgumentException("expected EXPR<TAB>FROM_MS<TAB>ZONE, got: " + line);
            }
            String expr = unescape(parts[0]);
            long from = Long.parseLong(parts[1]);
            TimeZone zone = TimeZone.getTimeZone(parts[2]);
            CronExpression cron;
            try {
                cron = new CronExpression(expr);
            } catch (ParseException e) {
                out.println("INVALID\t" + clean(e.getMessage()));
                continue;
            }
            cron.setTimeZone(zone);
            Future<String> answer = worker.submit(() -> fireTimes(cron, from, count));
            try {
                out.println(answer.get(TIME_LIMIT_MS, TimeUnit.MILLISECONDS));
            } catch (TimeoutException e) {
                // The looping thread cannot be stopped; abandon it (daemon) and carry on with a fresh one.
                worker.shutdownNow();
                worker = newWorker();
                out.println("TIMEOUT");
            } catch (java.util.concurrent.ExecutionException e) {
                out.println("ERROR\t" + clean(e.getCause().toString()));
            }
        }
        out.flush();
        System.exit(0);
    }

    private static String fireTimes(CronExpression cron, long from, int count) {
        List<String> times = new ArrayList<>();
        Date t = new Date(from);
        while (times.size() < count) {
            t = cron.getTimeAfter(t);
            if (t == null) {
                break;
            }
            times.add(Long.toString(t.getTime()));
        }
        return String.join("\t", times);
    }

    private static ExecutorService newWorker() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r, "cron-eval");
            thread.setDaemon(true);
            return thread;
        });
    }

    private static String unescape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                b.append(n == 't' ? '\t' : n);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static String clean(String message) {
        return String.valueOf(message).replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }
}
