package sluice.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;
import org.apache.camel.Exchange;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServer;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServerConfiguration;
import org.apache.camel.main.BaseMainSupport;
import org.apache.camel.main.MainListenerSupport;
import org.apache.camel.main.Main;
import org.w3c.dom.Document;

/**
 * The samples' HTTP flows as Camel routes, on the paths `sluice bench` calls, so that one suite
 * measures Sluice and Camel doing the same job. Usage: {@code CamelPeer PORT PROJECT_DIR [DATA_DIR]}.
 * With a data folder it also runs the file records job of samples/flows/file-records.yaml in
 * DATA_DIR/bench/records-in and records-out. Prints "ready" once it listens, as the bench
 * harness waits for.
 */
public final class CamelPeer extends RouteBuilder {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ThreadLocal<DocumentBuilder> DOM = ThreadLocal.withInitial(() -> {
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setNamespaceAware(true);
            return f.newDocumentBuilder();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    });
    private static final ThreadLocal<Transformer> WRITE = ThreadLocal.withInitial(() -> {
        try {
            return TransformerFactory.newInstance().newTransformer();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    });

    private final String project;
    private final String data;

    private CamelPeer(String project, String data) {
        this.project = project;
        this.data = data;
    }

    @Override
    public void configure() {
        // The request body back, unparsed (blob-echo).
        from("platform-http:/samples/blob-echo?httpMethodRestrict=POST")
            .convertBodyTo(byte[].class);
        // Parsed in full into a DOM and serialised back (xml-echo).
        from("platform-http:/samples/xml-echo?httpMethodRestrict=POST")
            .process(e -> {
                byte[] in = e.getMessage().getBody(byte[].class);
                Document doc = DOM.get().parse(new ByteArrayInputStream(in));
                ByteArrayOutputStream out = new ByteArrayOutputStream(in.length + 64);
                WRITE.get().transform(new DOMSource(doc), new StreamResult(out));
                e.getMessage().setBody(out.toByteArray());
            });
        // Parsed in full into a JSON tree and serialised back (json-echo).
        from("platform-http:/samples/json-echo?httpMethodRestrict=POST")
            .process(e -> {
                JsonNode tree = JSON.readTree(e.getMessage().getBody(byte[].class));
                e.getMessage().setBody(JSON.writeValueAsBytes(tree));
            });
        // The JSON request back with its last leaf changed (json-modify).
        from("platform-http:/samples/json-modify?httpMethodRestrict=POST")
            .process(e -> {
                JsonNode tree = JSON.readTree(e.getMessage().getBody(byte[].class));
                changeLastLeaf(tree);
                e.getMessage().setBody(JSON.writeValueAsBytes(tree));
            });
        // The samples' stylesheet applied to the request (xslt-transform).
        from("platform-http:/samples/xslt-transform?httpMethodRestrict=POST")
            .convertBodyTo(byte[].class)
            .to("xslt:file:" + project + "/xsl/transform.xsl?contentCache=true");
        if (data != null) {
            fileRecords();
        }
    }

    /**
     * Each line of each *.dat file in records-in numbered within its file and upper-cased, as
     * the ESQL module FileRecord does, and appended to the file of the same name in records-out;
     * the input file is deleted once every line is written. The bench writes each file under
     * another name and renames it, so no read lock is needed; the 100 ms poll matches the
     * Sluice flow's.
     */
    private void fileRecords() {
        from("file:" + data + "/bench/records-in?include=.*\\.dat&delete=true&readLock=none&delay=100")
            .split(body().tokenize("\n")).streaming()
                .process(e -> {
                    int record = e.getProperty(Exchange.SPLIT_INDEX, Integer.class) + 1;
                    String line = e.getMessage().getBody(String.class);
                    e.getMessage().setBody(record + ": " + line.toUpperCase(Locale.ROOT) + "\n");
                })
                .to("file:" + data + "/bench/records-out?fileExist=Append")
            .end();
    }

    /** Walks down the last children to a leaf and sets it to "Changed", as JsonModify does. */
    static void changeLastLeaf(JsonNode node) {
        JsonNode parent = null;
        String field = null;
        int index = -1;
        while (node.isContainerNode() && node.size() > 0) {
            parent = node;
            if (node.isObject()) {
                Iterator<Map.Entry<String, JsonNode>> it = node.fields();
                Map.Entry<String, JsonNode> last = null;
                while (it.hasNext()) {
                    last = it.next();
                }
                field = last.getKey();
                node = last.getValue();
            } else {
                index = node.size() - 1;
                node = node.get(index);
            }
        }
        if (parent instanceof ObjectNode o) {
            o.set(field, TextNode.valueOf("Changed"));
        } else if (parent instanceof ArrayNode a) {
            a.set(index, TextNode.valueOf("Changed"));
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 && args.length != 3) {
            System.err.println("usage: CamelPeer PORT PROJECT_DIR [DATA_DIR]");
            System.exit(2);
        }
        Main main = new Main();
        main.configure().addRoutesBuilder(new CamelPeer(args[1], args.length == 3 ? args[2] : null));
        VertxPlatformHttpServerConfiguration http = new VertxPlatformHttpServerConfiguration();
        http.setBindHost("127.0.0.1");
        http.setBindPort(Integer.parseInt(args[0]));
        main.addMainListener(new MainListenerSupport() {
            @Override
            public void beforeConfigure(BaseMainSupport m) {
                try {
                    m.getCamelContext().addService(new VertxPlatformHttpServer(http));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public void afterStart(BaseMainSupport m) {
                System.out.println("ready");
                System.out.flush();
            }
        });
        main.run();
    }
}
