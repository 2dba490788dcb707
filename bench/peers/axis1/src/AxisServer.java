package osprey.peer.axis1;

import org.apache.axis.transport.http.AxisServlet;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

/** AxisServlet in an embedded Jetty 9.4 on 127.0.0.1:PORT; WEBAPP/WEB-INF/server-config.wsdd
 *  deploys the service as "wstest" (http://127.0.0.1:PORT/wstest). Usage: AxisServer PORT WEBAPP */
public final class AxisServer {
    public static void main(String[] args) throws Exception {
        Server server = new Server();
        ServerConnector http = new ServerConnector(server);
        http.setHost("127.0.0.1");
        http.setPort(Integer.parseInt(args[0]));
        server.addConnector(http);
        ServletContextHandler ctx = new ServletContextHandler(ServletContextHandler.SESSIONS);
        ctx.setContextPath("/");
        ctx.setResourceBase(args[1]);
        ServletHolder axis = new ServletHolder("AxisServlet", new AxisServlet());
        axis.setInitOrder(1);
        ctx.addServlet(axis, "/*");
        server.setHandler(ctx);
        server.start();
        server.join();
    }
}
