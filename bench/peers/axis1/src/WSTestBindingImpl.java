package osprey.peer.axis1;

/** The WS Test echo for Axis 1.4: replaces the stub WSDL2Java generates for the SOAP 1.1
 *  binding. Axis binds the request to beans and serialises the same beans back. */
public class WSTestBindingImpl implements WSTestPortType {
    public void echoVoid() { }
    public SimpleStruct[] echoStruct(SimpleStruct[] input) { return input; }
    public LinkedList echoList(LinkedList input) { return input; }
}
