package sluice.peer;

import jakarta.xml.ws.Provider;
import jakarta.xml.ws.Service;
import jakarta.xml.ws.ServiceMode;
import jakarta.xml.ws.WebServiceProvider;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import javax.xml.namespace.QName;
import javax.xml.transform.dom.DOMSource;
import org.apache.cxf.jaxws.EndpointImpl;

/**
 * The samples' SOAP provider (samples/flows/soap-provider.yaml: the SaleRequest of
 * services/sale.wsdl received over SOAP and sent back as the reply) on Apache CXF: a JAX-WS
 * provider in payload mode, so that CXF parses the envelope, hands over the body's element as a
 * DOM (the whole request parsed, as Sluice's SOAP domain parses it) and wraps the element it
 * returns in the reply envelope. Usage: {@code CxfPeer PORT PROJECT_DIR}. Prints "ready" once
 * it listens, as the bench harness waits for.
 */
@WebServiceProvider
@ServiceMode(Service.Mode.PAYLOAD)
public final class CxfPeer implements Provider<DOMSource> {
    private static final String NS = "http://WssSale.miwssoap.broker.mqst.ibm.com";

    @Override
    public DOMSource invoke(DOMSource request) {
        return request;
    }

    /**
     * Jetty answers 404 for a moment after the endpoint is published, until CXF's handler is in
     * place: "ready" waits for an answer from the service itself.
     */
    private static void awaitService(String address) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        HttpRequest probe = HttpRequest.newBuilder(URI.create(address + "?wsdl")).GET().build();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (client.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode() != 200) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the service did not answer at " + address);
            }
            Thread.sleep(50);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: CxfPeer PORT PROJECT_DIR");
            System.exit(2);
        }
        EndpointImpl endpoint = new EndpointImpl(new CxfPeer());
        endpoint.setWsdlLocation(new File(args[1], "services/sale.wsdl").toURI().toString());
        endpoint.setServiceName(new QName(NS, "WssSaleService"));
        endpoint.setEndpointName(new QName(NS, "WssSalePort"));
        String address = "http://127.0.0.1:" + args[0] + "/samples/soap-provider";
        endpoint.publish(address);
        awaitService(address);
        System.out.println("ready");
        System.out.flush();
    }
}
