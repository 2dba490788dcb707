package osprey.peer;

import jakarta.jws.WebService;
import osprey.peer.gen.ArrayOfSimpleStruct;
import osprey.peer.gen.LinkedList;
import osprey.peer.gen.WSTestPortType;

/** The WS Test echo: CXF binds the request to objects and serialises them back. */
@WebService(endpointInterface = "osprey.peer.gen.WSTestPortType", targetNamespace = "urn:wstest",
            serviceName = "WSTestService", portName = "WSTestPort")
public class EchoImpl implements WSTestPortType {
    @Override public void echoVoid() { }
    @Override public ArrayOfSimpleStruct echoStruct(ArrayOfSimpleStruct input) { return input; }
    @Override public LinkedList echoList(LinkedList input) { return input; }
}
