package osprey.peer;

import jakarta.xml.ws.Endpoint;

/** Publishes EchoImpl at http://127.0.0.1:PORT/wstest on CXF's embedded Jetty. */
public final class Server {
    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 18082;
        Endpoint.publish("http://127.0.0.1:" + port + "/wstest", new EchoImpl());
        System.out.println("CXF listening on " + port);
        Thread.currentThread().join();
    }
}
